"""Text action grammars shared by adapters: pure functions from message text to `Action`s.

Three grammars are in use by the harnesses we read:
- mini-swe-agent: fenced ```` ```bash ```` blocks (``mswea_bash_command`` since v2), one action
  per block, parsed with mini-swe-agent's own regex (language tag, newline, body, newline, fence);
- SWE-smith / OpenHands-style XML calls ``<function=NAME><parameter=K>V</parameter></function>``;
- SWE-agent 0.x: the last top-level fenced block (any or no language tag) holds one command, either
  a shell command or one of SWE-agent's own commands (``open``, ``edit 1:3`` ... ``end_of_edit``).
"""

from __future__ import annotations

import re

from builder.ingest.formats.base import canonical_json, shell_action, tool_call_action
from schemas.steps import Action

BASH_FENCE_LANGUAGES = ("bash", "mswea_bash_command")
_BASH_FENCE = re.compile(
    r"```(?:" + "|".join(BASH_FENCE_LANGUAGES) + r")\s*\n(.*?)\n```", re.DOTALL
)


def bash_blocks(text: str) -> list[Action]:
    """One bash Action per fenced ```bash / ```mswea_bash_command block, in order."""
    return [shell_action(m.group(1), raw=m.group(0)) for m in _BASH_FENCE.finditer(text)]


_XML_CALL = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_XML_PARAM = re.compile(r"<parameter=([^>\s]+)>(.*?)</parameter>", re.DOTALL)


def _strip_one_newline(value: str) -> str:
    """Multi-line values are written `<parameter=k>\\nbody\\n</parameter>`: drop that framing."""
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def xml_function_calls(text: str) -> list[Action]:
    """Actions of `<function=NAME><parameter=K>V</parameter>...</function>` calls.

    A call cut off before `</function>` (a stop sequence) still counts; parameter values keep
    their inner text except one framing newline at each end; `command` of a shell tool
    (bash, execute_bash, ...) becomes `Action.command`.
    """
    actions = []
    for call in _XML_CALL.finditer(text):
        params = {
            m.group(1): _strip_one_newline(m.group(2)) for m in _XML_PARAM.finditer(call.group(2))
        }
        actions.append(tool_call_action(call.group(1), params, raw=call.group(0)))
    return actions


SWE_AGENT_TOOL = "swe-agent-command"
SWE_AGENT_COMMANDS = frozenset(
    {
        "open",
        "goto",
        "scroll_down",
        "scroll_up",
        "create",
        "edit",
        "insert",
        "append",
        "search_dir",
        "search_file",
        "find_file",
        "submit",
        "filemap",
        "str_replace_editor",
        "exit_forfeit",
        "skip",
    }
)
_FENCE_LINE = re.compile(r"^```(\S*)\s*$")


def last_fenced_block(text: str) -> tuple[str, str] | None:
    """(body, raw) of the last top-level fenced block, as SWE-agent's thought/action parser reads.

    A fence with a language tag always opens; a bare fence closes the innermost open block or
    opens a new one, so code fences nested inside an `edit` body stay part of it.
    """
    lines = text.split("\n")
    depth = 0
    start = 0
    last: tuple[int, int] | None = None
    for i, line in enumerate(lines):
        m = _FENCE_LINE.match(line)
        if not m:
            continue
        if m.group(1) or depth == 0:
            if depth == 0:
                start = i
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                last = (start, i)
    if last is None:
        return None
    body = "\n".join(lines[last[0] + 1 : last[1]])
    raw = "\n".join(lines[last[0] : last[1] + 1])
    return body, raw


def swe_agent_command(text: str) -> list[Action]:
    """The action of a SWE-agent 0.x thought/action message ([] without a fenced block).

    SWE-agent's own commands (`open`, `edit 1:3`, `search_dir`, ...) are shell functions in its
    environment: they get tool `swe-agent-command` with the full command text as both the
    `command` argument and `Action.command`; anything else is a plain `bash` command.
    """
    block = last_fenced_block(text)
    if block is None:
        return []
    body, raw = block
    command = body.strip("\n")
    if not command.strip():
        return []
    verb = command.split(maxsplit=1)[0]
    if verb in SWE_AGENT_COMMANDS:
        return [
            Action(
                tool=SWE_AGENT_TOOL,
                arguments=canonical_json({"command": command}),
                command=command,
                raw=raw,
            )
        ]
    return [shell_action(command, raw=raw)]
