"""Codex CLI rollout items to chat messages, one list per context window.

A rollout line is `{timestamp, type, payload}`; `response_item` payloads are the Responses API
items the model saw (`message`, `reasoning`, `function_call`, `custom_tool_call`,
`local_shell_call`, their outputs, ...). Consecutive model-output items form one assistant turn
(parallel calls stay together); outputs are paired to their calls by `call_id`
(`reconstruct.Transcript`). What is not text the model can be shown again stays out of the
messages and is only counted: reasoning items (their `encrypted_content` is opaque and is never
turned into text), web searches run by the API, ghost snapshots, remote compaction items.

A `compacted` line ends a context window: the model never saw the earlier items again. Each
window becomes its own message list; the next one starts from the recorded
`replacement_history` or, in versions that record only the summary, from the system prompt and
the summary as a user message. The compaction itself is never a step.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from builder.ingest.formats.base import bump, canonical_json
from builder.ingest.formats.reconstruct import Transcript, arguments_text
from schemas.trajectories import Message, ToolCall

Item = dict[str, Any]

MODEL_OUTPUTS = ("reasoning", "function_call", "custom_tool_call", "local_shell_call")
SKIPPED_OUTPUTS = ("web_search_call", "image_generation_call", "tool_search_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
ROLES = {"developer": "system", "system": "system", "user": "user", "assistant": "assistant"}
INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")
# `local_shell_call` (the Responses API's built-in shell) is replayed as this function
LOCAL_SHELL = "local_shell"
# shells whose `-c`/`-lc` argument is the command the model wrote
_SHELLS = ("bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "powershell.exe", "pwsh")


def shell_command(name: str, arguments: dict[str, Any]) -> str | None:
    """The shell command of a Codex tool call, or None when the tool is not a shell."""
    if name == "shell_command":
        value = arguments.get("command")
        return value if isinstance(value, str) else None
    if name == "exec_command":
        value = arguments.get("cmd")
        return value if isinstance(value, str) else None
    if name not in ("shell", "container.exec", LOCAL_SHELL):
        return None
    value = arguments.get("command")
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value) or not value:
        return None
    if len(value) == 3 and value[0] in _SHELLS and value[1] in ("-c", "-lc", "-Command"):
        return value[2]
    return shlex.join(value)


def text_of(content: Any, counts: dict[str, int]) -> str:
    """The text parts of a message or output (`input_text`, `output_text`, a plain string);
    images are counted, not described."""
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict):
            bump(counts, f"part:{part.get('type')}")
    return "\n".join(texts)


def tool_call(item: Item) -> ToolCall:
    """A model call item as a chat tool call; a freeform (custom) tool's input becomes the
    `input` argument of the same tool's JSON form (Codex offers `apply_patch` both ways)."""
    kind = item["type"]
    call_id = str(item.get("call_id") or item.get("id") or "")
    if kind == "function_call":
        return ToolCall(call_id, str(item.get("name", "")), arguments_text(item.get("arguments")))
    if kind == "custom_tool_call":
        return ToolCall(
            call_id, str(item.get("name", "")), canonical_json({"input": item.get("input")})
        )
    found = item.get("action")
    action: dict[str, Any] = found if isinstance(found, dict) else {}
    arguments = {"command": action.get("command")}
    for source, target in (("working_directory", "workdir"), ("timeout_ms", "timeout_ms")):
        if action.get(source) is not None:
            arguments[target] = action[source]
    return ToolCall(call_id, LOCAL_SHELL, canonical_json(arguments))


@dataclass
class Window:
    """The messages of one context window under construction."""

    transcript: Transcript = field(default_factory=Transcript)
    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    open_turn: bool = False

    def flush(self) -> None:
        if self.open_turn and (self.text or self.calls):
            self.transcript.add_assistant("\n".join(self.text), self.calls)
        self.text, self.calls, self.open_turn = [], [], False


@dataclass
class Segmenter:
    """Feeds response items in order; `windows` holds one message list per context window."""

    system_prompt: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    windows: list[list[Message]] = field(default_factory=list)
    current: Window = field(default_factory=Window)
    started: bool = False

    def _start(self) -> None:
        if not self.started:
            self.started = True
            if self.system_prompt:
                self.current.transcript.add(Message(role="system", content=self.system_prompt))

    def add(self, item: Item) -> None:
        self._start()
        kind = item.get("type")
        window = self.current
        if kind in MODEL_OUTPUTS:
            window.open_turn = True
            if kind == "reasoning":
                bump(self.counts, "reasoning_items")
                if item.get("encrypted_content"):
                    bump(self.counts, "encrypted_reasoning")
            else:
                window.calls.append(tool_call(item))
                bump(self.counts, f"calls:{kind}")
        elif kind == "message" and item.get("role") == "assistant":
            window.open_turn = True
            window.text.append(text_of(item.get("content"), self.counts))
        elif kind == "message" and item.get("role") in ROLES:
            window.flush()
            role = ROLES[str(item["role"])]
            window.transcript.add(
                Message(role=role, content=text_of(item.get("content"), self.counts))
            )
        elif kind in OUTPUTS:
            window.flush()
            self._output(item)
        elif kind in SKIPPED_OUTPUTS:
            bump(self.counts, f"skipped:{kind}")
        else:
            bump(self.counts, f"skipped:{kind}")

    def _output(self, item: Item) -> None:
        call_id = str(item.get("call_id") or "")
        content = text_of(item.get("output"), self.counts)
        message = Message(role="tool", content=content, tool_call_id=call_id)
        transcript = self.current.transcript
        if transcript.knows(call_id):
            message = Message("tool", content, tool_call_id=call_id, name=transcript.names[call_id])
            transcript.add_result(message)
        else:  # its call was in an earlier window: what the model saw is a plain output
            bump(self.counts, "orphan_outputs")
            transcript.add(Message(role="user", content=content))

    def compact(self, payload: dict[str, Any]) -> None:
        """A `compacted` line: close this window, open the next one on the new history."""
        self._start()
        self.current.flush()
        self.windows.append(self.current.transcript.finish()[0])
        self.current = Window()
        bump(self.counts, "compactions")
        if self.system_prompt:  # sent as `instructions` with every request, whatever the history
            self.current.transcript.add(Message(role="system", content=self.system_prompt))
        history = payload.get("replacement_history")
        if isinstance(history, list):
            for item in history:
                if isinstance(item, dict):
                    self.add(item)
            return
        summary = payload.get("message")
        if isinstance(summary, str) and summary:
            self.current.transcript.add(Message(role="user", content=summary))

    def finish(self) -> list[list[Message]]:
        self.current.flush()
        self.windows.append(self.current.transcript.finish()[0])
        return [w for w in self.windows if any(m.role == "assistant" for m in w)]


def is_injected(text: str) -> bool:
    """Context Codex adds as user messages (environment, AGENTS.md, permissions)."""
    return text.lstrip().startswith(INJECTED)


_GROUP_OF = {
    "shell": "shell", "container.exec": "shell", "shell_command": "shell_command",
    "exec_command": "unified_exec", "write_stdin": "unified_exec", LOCAL_SHELL: "local_shell",
    "read_file": "files", "list_dir": "files", "grep_files": "files",
}  # fmt: skip
_SHELL_GROUPS = ("shell", "shell_command", "unified_exec", "local_shell")


def tool_groups(windows: list[list[Message]]) -> list[str]:
    """The groups of `harness_tools/codex-cli.json` this session had: the shell tools it called
    (`shell` when it called none), the always-present ones, and the file tools if used."""
    used = {_GROUP_OF.get(c.name) for w in windows for m in w for c in m.tool_calls}
    shells = [g for g in _SHELL_GROUPS if g in used] or ["shell"]
    return [*shells, "apply_patch", "plan", "view_image", *(["files"] if "files" in used else [])]
