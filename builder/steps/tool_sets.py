"""The tool schemas an agent request carries when it replays a tool-calling trajectory.

Many harnesses log tool calls but not the schemas the model was given (Claude Code, SWE-agent
with function calling). Replaying their history without `tools` fails on Anthropic (400: a
request with `tool_use`/`tool_result` blocks must define tools) and leaves an OpenAI-shaped
agent only text to answer in. So, in order:
1. the schemas the trajectory recorded (`TrajectoryRecord.tools`);
2. else the harness's own tool set: `harness_tools/<harness>.json`, one file per harness (the
   extension point for new harnesses), holding groups of OpenAI function schemas, the groups a
   run of the harness has by default, old group names, and where each definition comes from.
   A trajectory that knows its groups names them in its metadata (`tool_groups`: SWE-agent's
   bundles); the file's `default_groups` otherwise;
3. for every tool called in the trajectory that neither covers, a schema inferred from the
   calls (the argument keys seen, their JSON types, and the keys every call passed).
`source` says which: `recorded`, `harness`, `inferred`, with `+inferred` when calls had to be
filled in; the steps table keeps it (`tool_schemas`).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas.trajectories import Message, TrajectoryRecord

HARNESS_TOOLS = Path(__file__).parent / "harness_tools"
# both APIs: OpenAI function names ^[a-zA-Z0-9_-]{1,64}$, Anthropic tool names the same
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
INFERRED_NOTE = "Inferred from the calls logged in this trajectory (no schema was recorded)."

RECORDED, HARNESS, INFERRED = "recorded", "harness", "inferred"


@dataclass(frozen=True)
class ToolSet:
    """The tools of one trajectory's agent requests (None: it made no tool call)."""

    tools: tuple[dict[str, Any], ...] | None
    source: str | None


def tool_name(tool: dict[str, Any]) -> str | None:
    """The name of an OpenAI (`function.name`) or Anthropic (`name`) tool schema."""
    function = tool.get("function")
    name = function.get("name") if isinstance(function, dict) else tool.get("name")
    return name if isinstance(name, str) else None


@functools.cache
def harness_file(harness: str) -> dict[str, Any] | None:
    """The tool-set file of a harness, or None when the project has none for it."""
    path = HARNESS_TOOLS / f"{harness}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def harness_tools(harness: str, groups: list[str] | None = None) -> list[dict[str, Any]] | None:
    """The harness's tools for `groups` (its default groups when None), first definition of a
    name kept; None when the harness has no tool-set file."""
    spec = harness_file(harness)
    if spec is None:
        return None
    aliases: dict[str, str] = spec.get("aliases", {})
    wanted = spec["default_groups"] if groups is None else groups
    tools: dict[str, dict[str, Any]] = {}
    for group in wanted:
        for tool in spec["groups"].get(aliases.get(group, group), []):
            tools.setdefault(tool_name(tool) or "", tool)
    return list(tools.values())


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null" if value is None else "object"


def inferred_tool(name: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """An OpenAI function schema for `name` from the arguments of its logged calls."""
    types: dict[str, set[str]] = {}
    for arguments in calls:
        for key, value in arguments.items():
            types.setdefault(key, set()).add(_json_type(value))
    properties: dict[str, Any] = {}
    for key, seen in types.items():
        kinds = sorted(seen - {"null"}) or ["string"]
        properties[key] = {"type": kinds[0] if len(kinds) == 1 else kinds}
    required = [k for k in types if all(k in c for c in calls)]
    parameters = {"type": "object", "properties": properties, "required": required}
    function = {"name": name, "description": INFERRED_NOTE, "parameters": parameters}
    return {"type": "function", "function": function}


def _calls(messages: list[Message]) -> dict[str, list[dict[str, Any]]]:
    """The arguments of every logged call, by tool name (in order of first use)."""
    calls: dict[str, list[dict[str, Any]]] = {}
    for message in messages:
        for call in message.tool_calls:
            try:
                arguments = json.loads(call.arguments) if call.arguments else {}
            except json.JSONDecodeError:
                arguments = {}
            calls.setdefault(call.name, []).append(arguments if isinstance(arguments, dict) else {})
    return calls


def _recorded(traj: TrajectoryRecord) -> list[dict[str, Any]] | None:
    if not traj.tools:
        return None
    try:
        tools = json.loads(traj.tools)
    except json.JSONDecodeError:
        return None
    found = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    return found or None


def _groups(traj: TrajectoryRecord) -> list[str] | None:
    try:
        metadata = json.loads(traj.metadata or "{}")
    except json.JSONDecodeError:
        return None
    groups = metadata.get("tool_groups") if isinstance(metadata, dict) else None
    return [g for g in groups if isinstance(g, str)] if isinstance(groups, list) else None


def resolve_tools(traj: TrajectoryRecord) -> ToolSet:
    """The tools for `traj`'s agent requests and where they come from (module rule)."""
    recorded = _recorded(traj)
    calls = _calls(traj.messages)
    uses_tools = bool(calls) or any(m.role == "tool" for m in traj.messages)
    if recorded is not None:
        base, source = recorded, RECORDED
    elif not uses_tools:
        return ToolSet(None, None)
    else:
        found = harness_tools(traj.harness, _groups(traj))
        base, source = (found, HARNESS) if found else ([], INFERRED)
    known = {tool_name(t) for t in base}
    missing = [n for n in calls if n not in known and _TOOL_NAME.match(n)]
    tools = base + [inferred_tool(name, calls[name]) for name in missing]
    if missing and source != INFERRED:
        source += "+inferred"
    return ToolSet(tuple(tools) if tools else None, source if tools else None)
