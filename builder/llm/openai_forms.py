"""Which forms of a request body to try on an OpenAI-compatible server, richest first, and what
a server's answer teaches about it (kept in `Capabilities` for the rest of the run).

A form is (structured-output dialect, content as lists of parts or not). Servers differ in
what they honour: `json_schema` with `strict: true` when the schema allows it, then without
`strict`, then `json_object` with the schema (llama.cpp); content lists, else plain strings.
"""

from __future__ import annotations

from builder.llm.messages import root_object_schema
from builder.llm.openai_wire import Capabilities, is_strict_compatible
from builder.llm.protocol import ChatRequest

Form = tuple[str, bool]  # (dialect, content parts)


def forms(capabilities: Capabilities, request: ChatRequest) -> list[Form]:
    """The forms to try for `request`: only the known-good one once a server answered."""
    dialects = [capabilities.response_format or "json_schema"]
    if request.json_schema is not None and capabilities.response_format is None:
        strict = is_strict_compatible(root_object_schema(request.json_schema))
        dialects = [*(["json_schema_strict"] if strict else []), "json_schema", "json_object"]
    has_parts = any(m.content_parts for m in request.messages)
    parts = [capabilities.content_parts is not False] if has_parts else [False]
    if has_parts and capabilities.content_parts is None:
        parts.append(False)
    return [(d, p) for p in parts for d in dialects]


def learn(
    capabilities: Capabilities, request: ChatRequest, form: Form, refused: int | None
) -> list[str]:
    """Record that `form` worked for `request` (after a refusal with HTTP status `refused`, or
    at once); what is worth a log line comes back."""
    dialect, parts = form
    said: list[str] = []
    if request.json_schema is not None and capabilities.response_format is None:
        capabilities.response_format = dialect
        if refused is not None:
            said.append(f"refused richer structured output (HTTP {refused}): using {dialect}")
    if any(m.content_parts for m in request.messages) and capabilities.content_parts is None:
        capabilities.content_parts = parts
        if not parts:
            said.append(f"refused content lists (HTTP {refused}): sending their text as strings")
    return said
