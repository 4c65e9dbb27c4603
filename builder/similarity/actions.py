"""Any action as canonical units: shell lines (`canonical`), tool calls and whole turns.

Tool calls become the same kinds of unit as shell commands where they do the same work, so
`str_replace_editor view f [1, 50]`, Claude Code's `Read` and `nl -ba f | sed -n 1,50p` are
one read of lines 1-50 of f. Edits keep their exact texts (trailing spaces aside): an
unindented replacement line is another change than an indented one (marshmallow-1867, two
SWE-agent edits one step apart). A turn of several calls is the sequence of their units.
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from typing import Any

from builder.ingest.formats.base import TURN_TOOL, canonical_json, is_shell, turn_calls
from builder.similarity import intent as it
from builder.similarity.canonical import Unit, read_key, shell_units
from builder.similarity.code import content_key, fragment_key, python_key
from builder.similarity.normalize import canonical_arguments, resolve
from builder.similarity.records import WHOLE, LineRange
from builder.similarity.tools import EDITOR_TOOLS, to_int, view_range
from builder.similarity.writes import submit_key
from schemas.steps import Action

# free text a submit tool carries beside what it submits (OpenHands `finish(message=...)`)
_SUBMIT_TEXT = frozenset({"message", "thought", "summary", "final_thought"})


def action_units(action: Action, cwd: str | None = None) -> tuple[Unit, ...]:
    """The units of an action, in order; shell commands run from `cwd` (a kept shell's
    working directory, `environment.Environment.cwd`), else from the repository root."""
    if action.tool == TURN_TOOL:
        return tuple(u for call in turn_calls(action) for u in action_units(call, cwd))
    if is_shell(action):
        return shell_units(action.command or "", cwd)
    return tool_units(action.tool, action.arguments)


@lru_cache(maxsize=8192)
def tool_units(tool: str, arguments: str) -> tuple[Unit, ...]:
    """The units of one non-shell tool call (cached)."""
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        args = {"_raw": arguments}
    if not isinstance(args, dict):
        args = {"_value": args}
    if tool in it.SUBMIT_TOOLS:
        payload = {k: v for k, v in args.items() if k not in _SUBMIT_TEXT}
        return (Unit("submit", (submit_key(tool, payload),)),)
    unit = _editor(tool, args) if tool in EDITOR_TOOLS else _claude(tool, args)
    if unit is not None:
        return (unit,)
    if tool in ("execute_ipython_cell", "ipython"):
        code = str(args.get("code", ""))
        skill = agent_skill(code)
        return (
            (skill,) if skill else (Unit("python", ("python", "ipython", python_key(code, True))),)
        )
    return (Unit("tool", ("tool", tool, canonical_json(canonical_arguments(arguments)))),)


# OpenHands v0's file skills, called from its IPython tool: (name, argument names)
_SKILLS = {
    "open_file": ("path", "line_number", "context_lines"),
    "edit_file_by_replace": ("file_name", "to_replace", "new_content"),
    "insert_content_at_line": ("file_name", "line_number", "content"),
    "append_file": ("file_name", "content"),
}


def agent_skill(code: str) -> Unit | None:
    """A cell that is one call of an OpenHands file skill with literal arguments, as the
    editor unit it is (`edit_file_by_replace(f, old, new)` is a str_replace of f)."""
    try:
        tree = ast.parse(code.strip())
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    names = _SKILLS.get(call.func.id)
    try:
        values = [ast.literal_eval(a) for a in call.args]
        values += [None] * (len(names or ()) - len(values))
        args = dict(zip(names or (), values, strict=True))
        args |= {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    except (ValueError, TypeError, SyntaxError):
        return None
    if names is None:
        return None
    return _skill_unit(call.func.id, args)


def _skill_unit(name: str, args: dict[str, Any]) -> Unit:
    path = resolve(str(args.get("path") or args.get("file_name") or ""), None)
    if name == "open_file":
        line = to_int(args.get("line_number")) or 1
        span = to_int(args.get("context_lines")) or 100
        start = max(1, line - span // 2) if line > 1 else 1
        return Unit("read", read_key((path,)), (LineRange(start, start + span - 1),))
    if name == "edit_file_by_replace":
        old, new = _text(args.get("to_replace"), path), _text(args.get("new_content"), path)
        return Unit("edit", ("edit", "str_replace", path, old, new))
    if name == "insert_content_at_line":
        at = to_int(args.get("line_number"))
        return Unit("edit", ("edit", "insert", path, at, _text(args.get("content"), path)))
    return Unit("edit", ("edit", "append", path, _text(args.get("content"), path)))


def tool_path(args: dict[str, Any]) -> str:
    """The file an editor call names (`path`, Claude Code's `file_path`), as units name it."""
    return resolve(str(args.get("path") or args.get("file_path") or ""), None)


def _text(value: object, path: str | None = None) -> str:
    return fragment_key(str(value or ""), path)


def whole_write_key(path: str, content: object) -> tuple:
    """A whole file written: the key `cat <<EOF > path` has too (`commands._write`)."""
    return ("write", ">", path, content_key(str(content or ""), path))


def _editor(tool: str, args: dict[str, Any]) -> Unit | None:
    """str_replace_editor and its kin: view / create / str_replace / insert / undo_edit."""
    op = str(args.get("command") or "view")
    path = tool_path(args)
    if op == "view":
        return Unit("read", read_key((path,)), (view_range(args.get("view_range")),))
    if op == "create":
        return Unit("write", (whole_write_key(path, args.get("file_text")),))
    if op == "str_replace":
        old, new = _text(args.get("old_str"), path), _text(args.get("new_str"), path)
        return Unit("edit", ("edit", "str_replace", path, old, new))
    if op == "insert":
        line = to_int(args.get("insert_line"))
        return Unit("edit", ("edit", "insert", path, line, _text(args.get("new_str"), path)))
    return Unit("edit", ("edit", op, path))


def _claude(tool: str, args: dict[str, Any]) -> Unit | None:
    """Claude Code's Read / Edit / MultiEdit / Write."""
    path = tool_path(args)
    if tool == "Read":
        start = to_int(args.get("offset")) or 1
        limit = to_int(args.get("limit"))
        view = LineRange(start, start + limit - 1) if limit else LineRange(start, None)
        return Unit("read", read_key((path,)), (view if view != LineRange(1, None) else WHOLE,))
    if tool == "Edit":
        old, new = _text(args.get("old_string"), path), _text(args.get("new_string"), path)
        return Unit("edit", ("edit", "str_replace", path, old, new, bool(args.get("replace_all"))))
    if tool == "MultiEdit":
        edits = args.get("edits")
        edits = edits if isinstance(edits, list) else []
        changes = tuple(
            (
                _text(e.get("old_string"), path),
                _text(e.get("new_string"), path),
                bool(e.get("replace_all")),
            )
            for e in edits
            if isinstance(e, dict)
        )
        return Unit("edit", ("edit", "multi", path, changes))
    if tool == "Write":
        return Unit("write", (whole_write_key(path, args.get("content")),))
    return None
