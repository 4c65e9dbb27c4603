"""Cline and Roo Code grammar: XML tool uses written in the assistant's text, and the envelope
around tool results (`[tool for 'arg'] Result:`, `Command executed ... Output:`, the
`<environment_details>` block the extension appends to every user turn)."""

from __future__ import annotations

import re

from builder.ingest.formats.base import canonical_json
from schemas.steps import Action

CLINE_TOOLS = (
    "execute_command", "read_file", "write_to_file", "replace_in_file", "search_files",
    "list_files", "list_code_definition_names", "browser_action", "use_mcp_tool",
    "access_mcp_resource", "ask_followup_question", "attempt_completion", "new_task",
    "plan_mode_respond", "act_mode_respond", "load_mcp_documentation", "web_fetch", "condense",
    "summarize_task", "report_bug", "new_rule",
)  # fmt: skip
ROO_ONLY_TOOLS = (
    "apply_diff", "insert_content", "search_and_replace", "codebase_search", "switch_mode",
    "update_todo_list", "fetch_instructions", "run_slash_command", "generate_image",
)  # fmt: skip
TOOLS = CLINE_TOOLS + ROO_ONLY_TOOLS
SHELL = "execute_command"
# parameters whose value is free text that may hold tags of its own: they end at the last close
LONG_PARAMS = ("content", "diff", "result", "response", "context", "message", "todos")

_THINKING = re.compile(r"<thinking>.*?(?:</thinking>|\Z)", re.DOTALL)
_OPEN = re.compile(r"<(" + "|".join(TOOLS) + r")>")
_PARAM = re.compile(r"<([a-z_]+)>")
_RESULT_HEAD = re.compile(r"\A\[[a-z_]+(?: for '.*?')?\] Result:\n", re.DOTALL)
_COMMAND_HEAD = re.compile(
    r"(?:Command executed[^\n]*\nOutput:\n|Command is still running[^\n]*\n"
    r"Here's the output so far:\n)"
)
_FILE_CONTENT = re.compile(
    r'\A(<files><file><path>[^<\n]*</path>\n<content lines="[^"\n]*">\n)(.*)'
    r"(\n</content>\n</file>\n</files>)\Z",
    re.DOTALL,
)
_ENVIRONMENT = "<environment_details>"


def _params(body: str) -> dict[str, str]:
    """The `<name>value</name>` children of a tool use, in order."""
    params: dict[str, str] = {}
    position = 0
    while (match := _PARAM.search(body, position)) is not None:
        name = match.group(1)
        closing = f"</{name}>"
        if name in LONG_PARAMS:
            end = body.rfind(closing, match.end())
        else:
            end = body.find(closing, match.end())
        if end == -1:  # cut off (a stop sequence): the rest is the value
            end = len(body)
        value = body[match.end() : end]
        params[name] = value.strip("\n") if name in LONG_PARAMS else value.strip()
        position = end + len(closing)
    return params


def xml_tool_use(text: str) -> list[Action]:
    """The tool use of an assistant turn: the first complete or cut-off `<tool>...</tool>`
    outside `<thinking>`; the extension runs one tool a turn and ignores any later one."""
    visible = _THINKING.sub("", text)
    match = _OPEN.search(visible)
    if match is None:
        return []
    name = match.group(1)
    closing = f"</{name}>"
    end = visible.find(closing, match.end())
    stop = len(visible) if end == -1 else end + len(closing)
    params = _params(visible[match.end() : end if end != -1 else len(visible)])
    command = params.get("command") if name == SHELL else None
    return [Action(name, canonical_json(params), command, visible[match.start() : stop])]


def split_result(text: str) -> tuple[str, str, str]:
    """(envelope before, the tool's output, envelope after) of a tool result as the model got it:
    the `[tool for 'arg'] Result:` line and a command's status line go before, the
    `<environment_details>` block after; a Roo `read_file` keeps its `<files>` frame."""
    head = _RESULT_HEAD.match(text)
    start = head.end() if head else 0
    command = _COMMAND_HEAD.match(text, start)
    if command is not None:
        start = command.end()
    cut = text.rfind("\n" + _ENVIRONMENT)
    end = cut if cut >= start else len(text)
    while end > start and text[end - 1] == "\n":
        end -= 1
    framed = _FILE_CONTENT.match(text[start:end])
    if framed is not None:
        return text[:start] + framed.group(1), framed.group(2), framed.group(3) + text[end:]
    return text[:start], text[start:end], text[end:]


def is_roo_text(text: str) -> bool:
    """Roo Code's environment details name the mode by slug; its own tools are Roo's alone."""
    return "<slug>" in text or any(f"<{name}>" in text for name in ROO_ONLY_TOOLS)
