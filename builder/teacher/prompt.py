"""The compressor (teacher) prompt: versioned system prompt, user prompt and request.

Input follows the reference method: task goal, focus question, executed command and the
line-numbered output; no history. Bump `PROMPT_VERSION` whenever any text here changes, since
it is stored with every candidate and supervision row.
"""

from __future__ import annotations

from typing import Any

from builder.llm.protocol import ChatRequest
from builder.steps.observation import number_lines
from schemas.trajectories import Message

PROMPT_VERSION = "coact-v2"  # v2: schema with the exact union of kinds, strict-compatible
DEFAULT_K = 8
DEFAULT_TEMPERATURE = 1.0
DEFAULT_MAX_TOKENS = 1024
NO_FOCUS = "(none given: keep what the agent most likely needs for its next step)"

SYSTEM_PROMPT = """\
You compress the output of a command for a coding agent. The agent ran the command while \
working on a task and will read your version instead of the full output. Keep exactly what the \
agent needs to choose its next action correctly; remove what it does not need.

Answer with exactly one JSON object and nothing else, in one of three forms:

1. {"type": "unchanged"}
   Keep the output as it is. Use this when it is short, when every line matters (for example \
a file the agent is about to edit), or when you are unsure.

2. {"type": "plain", "content": "..."}
   Replace the whole output with a short summary. Use this for logs, listings, progress \
output or passing test runs, where the agent only needs the gist. Keep exact names, paths, \
numbers and error messages the agent may need.

3. {"type": "code", "content": ["3-41: what these lines were", "57: what this line was"]}
   Omit line ranges; every other line is kept verbatim. Output lines are numbered "N> "; \
"N-M" is an inclusive range of those numbers ("N: ..." for a single line). Ranges must be \
sorted and must not overlap. The agent sees each omitted range as \
"(compressed K lines: summary)", so say briefly what was there. Use this for source code, \
diffs and test failures: keep the lines that matter for the task and the focus question, omit \
the rest.

Never omit what the agent must act on: error messages, tracebacks, failing test names, the \
code around the place it will edit, line numbers it will refer to. The result must be shorter \
than the original output."""

# One omitted range as `parse.parse_range` reads it, with a one-line summary. No quote,
# backslash or newline in the summary: llama.cpp turns a pattern into grammar characters
# without JSON escaping, so those would let it write invalid JSON. No `{m,n}` bounds: the
# converter unrolls them into nested rules.
RANGE_PATTERN = r'^[1-9][0-9]*(-[1-9][0-9]*)?: [^"\\\n]+$'

_CONTENT: dict[str, dict[str, Any]] = {
    "plain": {"type": "string", "minLength": 1},
    "code": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": RANGE_PATTERN}},
}


def _variant(kind: str) -> dict[str, Any]:
    """The exact object of one kind: `unchanged` alone, the others with their content."""
    properties: dict[str, Any] = {"type": {"const": kind}}
    if kind in _CONTENT:
        properties["content"] = _CONTENT[kind]
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


# The answer shape for structured output, in two layers. The root `anyOf` is exact (each kind
# with its own content); llama.cpp compiles it into the grammar of both embedded modes, so
# the embedded teacher can only write a parseable answer. Anthropic tool inputs and OpenAI
# json_schema reject composition at the root and get the plain object around it
# (`builder.llm.messages.root_object_schema`), which cannot tie `content` to `type`: the
# parser checks that pairing.
COMPRESSOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["unchanged", "plain", "code"]},
        "content": {"anyOf": [_CONTENT["plain"], _CONTENT["code"], {"type": "null"}]},
    },
    # every property required (content may be null): what OpenAI's strict mode accepts
    "required": ["type", "content"],
    "additionalProperties": False,
    "anyOf": [_variant(kind) for kind in ("unchanged", "plain", "code")],
}


def build_prompt(task: str, focus: str | None, command: str, observation: str) -> tuple[str, str]:
    """(system, user) prompts for compressing `observation`, the output of `command`."""
    numbered = number_lines(observation)
    lines = observation.count("\n") + 1
    user = (
        f"<task>\n{task.strip()}\n</task>\n\n"
        f"<focus_question>{(focus or '').strip() or NO_FOCUS}</focus_question>\n\n"
        f"<command>\n{command.strip()}\n</command>\n\n"
        f'<output lines="{lines}">\n{numbered}\n</output>\n\n'
        "Answer with one JSON object."
    )
    return SYSTEM_PROMPT, user


def teacher_request(
    system: str,
    user: str,
    *,
    n: int = DEFAULT_K,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    seed: int | None = None,
    structured: bool = True,
) -> ChatRequest:
    """The K-sample teacher request; `structured` asks for JSON matching `COMPRESSOR_SCHEMA`."""
    return ChatRequest(
        messages=(Message("system", system), Message("user", user)),
        n=n,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        json_schema=COMPRESSOR_SCHEMA if structured else None,
    )
