"""Features of non-shell tool calls: editors (view/create/str_replace/insert/undo) and friends.

Editor calls map onto the shell vocabulary (view = read with a range, create = write,
str_replace = edit with an anchor) and are flagged `editor=True` so two of them are compared
field-wise. Claude Code's Read/Edit/Write/Grep/Glob/LS map the same way.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from builder.similarity import intent as it
from builder.similarity.normalize import resolve
from builder.similarity.records import SUBMIT_FEATURES, WHOLE, Features, LineRange

EDITOR_TOOLS = frozenset(
    {"str_replace_editor", "str_replace_based_edit_tool", "file_editor", "edit_file"}
)


@lru_cache(maxsize=8192)
def tool_features(tool: str, arguments: str) -> tuple[Features, ...]:
    """Features of a non-shell tool call from its JSON arguments (cached)."""
    if tool in it.SUBMIT_TOOLS:
        return (SUBMIT_FEATURES,)
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        args = {}
    if not isinstance(args, dict):
        args = {}
    unit = _tool_unit(tool, args)
    if unit is None:
        text = json.dumps(args, sort_keys=True)
        unit = Features(intent=f"tool:{tool}", verb=tool, content=text)
    return (unit,)


def _tool_unit(tool: str, args: dict[str, Any]) -> Features | None:
    if tool in EDITOR_TOOLS:
        return editor_features(args)
    path = str(args.get("file_path") or args.get("path") or "")
    if tool == "Read":
        start = to_int(args.get("offset")) or 1
        limit = to_int(args.get("limit"))
        rng = LineRange(start, start + limit - 1) if limit else LineRange(start, None)
        return editor_features({"command": "view", "path": path}, ranges=(rng,))
    if tool in ("Edit", "MultiEdit"):
        edits = args.get("edits") if tool == "MultiEdit" else [args]
        edits = edits if isinstance(edits, list) else []
        old = "\n".join(str(e.get("old_string", "")) for e in edits if isinstance(e, dict))
        new = "\n".join(str(e.get("new_string", "")) for e in edits if isinstance(e, dict))
        return editor_features(
            {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
        )
    if tool == "Write":
        return editor_features(
            {"command": "create", "path": path, "file_text": args.get("content")}
        )
    if tool == "Grep":
        return Features(
            intent=it.SEARCH,
            verb="grep",
            op="content",
            patterns=frozenset({str(args.get("pattern", ""))}),
            files=frozenset({resolve(path or ".", None)}),
        )
    if tool == "Glob":
        return Features(
            intent=it.SEARCH,
            verb="find",
            op="name",
            patterns=frozenset({str(args.get("pattern", ""))}),
            files=frozenset({resolve(path or ".", None)}),
        )
    if tool == "LS":
        return Features(intent=it.LIST, verb="ls", files=frozenset({resolve(path or ".", None)}))
    if tool in ("execute_ipython_cell", "ipython"):
        return Features(intent=it.RUN, verb="python", content=str(args.get("code", "")))
    return None


def editor_features(args: dict[str, Any], ranges: tuple[LineRange, ...] | None = None) -> Features:
    """Features of a str_replace_editor-style call: view / create / str_replace / insert / undo."""
    op = str(args.get("command") or "view")
    files = frozenset({resolve(str(args.get("path") or ""), None)})
    if op == "view":
        if ranges is None:
            ranges = (view_range(args.get("view_range")),)
        return Features(
            intent=it.READ, verb="view", op="view", files=files, ranges=ranges, editor=True
        )
    if op == "create":
        text = args.get("file_text")
        return Features(
            intent=it.MODIFY,
            verb="create",
            op="write",
            files=files,
            content=str(text) if text is not None else None,
            editor=True,
        )
    if op == "insert":
        line = to_int(args.get("insert_line")) or 0
        return Features(
            intent=it.MODIFY,
            verb="insert",
            op="insert",
            files=files,
            ranges=(LineRange(line, line),),
            content=str(args.get("new_str") or ""),
            editor=True,
        )
    if op == "str_replace":
        return Features(
            intent=it.MODIFY,
            verb="str_replace",
            op="edit",
            files=files,
            old_text=str(args.get("old_str") or ""),
            content=str(args.get("new_str") or ""),
            editor=True,
        )
    return Features(intent=it.MODIFY, verb=op, op=op, files=files, editor=True)


def view_range(value: object) -> LineRange:
    """An editor's `view_range` ([start, end], end -1 = to the end) as lines; whole file
    when absent or unreadable."""
    if isinstance(value, str):  # XML-style tool calls carry it as text: "[1, 100]"
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return WHOLE
    if isinstance(value, list) and len(value) == 2:
        start, end = to_int(value[0]), to_int(value[1])
        if start is not None:
            return LineRange(max(start, 1), None if end is None or end < 0 else end)
    return WHOLE


def to_int(value: object) -> int | None:
    """An int from a JSON value, or None (tool arguments are not always well typed)."""
    try:
        return int(value) if isinstance(value, (int, float, str)) else None
    except (TypeError, ValueError):
        return None
