"""The body forms tried on an OpenAI-compatible server, and what an answer teaches."""

from __future__ import annotations

import json

from builder.llm.openai_forms import forms, learn
from builder.llm.openai_wire import Capabilities
from builder.llm.protocol import ChatRequest
from schemas.trajectories import Message

STRICT = {
    "type": "object",
    "properties": {"summary": {"type": "string"}},
    "required": ["summary"],
    "additionalProperties": False,
}
LOOSE = {"type": "object", "properties": {"summary": {"type": "string"}, "why": {}}}
PARTS = json.dumps([{"type": "text", "text": "ls"}])


def ask(schema: dict[str, object] | None = None, parts: str | None = None) -> ChatRequest:
    return ChatRequest((Message("user", "ls", content_parts=parts),), json_schema=schema)


def test_richest_first_and_strict_only_where_the_schema_allows_it() -> None:
    fresh = Capabilities()
    assert forms(fresh, ask(STRICT)) == [
        ("json_schema_strict", False),
        ("json_schema", False),
        ("json_object", False),
    ]
    assert forms(fresh, ask(LOOSE)) == [("json_schema", False), ("json_object", False)]
    assert forms(fresh, ask(parts=PARTS)) == [("json_schema", True), ("json_schema", False)]


def test_a_working_form_is_kept_and_only_refusals_are_worth_a_line() -> None:
    seen = Capabilities()
    said = learn(seen, ask(STRICT, PARTS), ("json_object", False), 400)
    assert (seen.response_format, seen.content_parts) == ("json_object", False)
    assert len(said) == 2 and all("HTTP 400" in line for line in said)
    assert forms(seen, ask(STRICT, PARTS)) == [("json_object", False)]
    quiet = Capabilities()
    assert learn(quiet, ask(STRICT), ("json_schema_strict", False), None) == []
    assert quiet.response_format == "json_schema_strict"
