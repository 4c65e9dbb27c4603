"""The whole text of files the agent wrote, kept up to date through its editor edits.

Agents write a script whole and then patch it with `str_replace` (django-13741: a test script
created, edited three times, then written again whole under another name with the same code).
The log holds every argument, so the text after each edit is known exactly, as the editor
computes it: `str_replace` needs `old_str` exactly once (str_replace_editor; Claude Code's
Edit unless `replace_all`), `insert` puts `new_str` after line `insert_line`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from builder.similarity.actions import tool_path, whole_write_key
from schemas.steps import Action

_REFUSED = re.compile(r"File already exists at: .*Cannot overwrite files", re.S)
_EDITORS = frozenset({"str_replace_editor", "edit", "str_replace_based_edit_tool", "file_editor"})


def _args(action: Action) -> dict[str, Any] | None:
    try:
        args = json.loads(action.arguments or "null")
    except json.JSONDecodeError:
        return None
    return args if isinstance(args, dict) else None


def _replace(text: str, old: object, new: object, every: bool = False) -> str | None:
    if not isinstance(old, str) or not old or not isinstance(new, str):
        return None
    count = text.count(old)
    if count == 0 or (count > 1 and not every):
        return None  # the editor refuses: no change
    return text.replace(old, new)


def _insert(text: str, line: object, new: object) -> str | None:
    if not isinstance(line, int) or not isinstance(new, str) or line < 0:
        return None
    lines = text.split("\n")
    if line > len(lines):
        return None
    return "\n".join([*lines[:line], *new.split("\n"), *lines[line:]])


def edited(texts: dict[str, str], action: Action) -> tuple[str, str | None] | None:
    """(path, its whole text after the action, None where it is no longer known) for an editor
    write or edit; None for any other action."""
    args = _args(action)
    if args is None:
        return None
    path = tool_path(args)
    if action.tool in _EDITORS:
        op = args.get("command")
        if op == "create":
            content = args.get("file_text")
            return path, content if isinstance(content, str) else None
        if op not in ("str_replace", "insert"):
            return None
        if path not in texts:
            return path, None
        if op == "str_replace":
            after = _replace(texts[path], args.get("old_str"), args.get("new_str", ""))
        else:
            after = _insert(texts[path], args.get("insert_line"), args.get("new_str"))
        return path, texts[path] if after is None else after  # a refused edit changes nothing
    if action.tool == "Write":
        content = args.get("content")
        return path, content if isinstance(content, str) else None
    if action.tool == "Edit":
        if path not in texts:
            return path, None
        new, every = args.get("new_string", ""), bool(args.get("replace_all"))
        after = _replace(texts[path], args.get("old_string"), new, every)
        return path, texts[path] if after is None else after
    return None


def refused_create(texts: dict[str, str], action: Action, observation: str) -> bool:
    """Whether an editor `create` wrote nothing: str_replace_editor refuses an existing path
    ("File already exists at: PATH. Cannot overwrite files using command `create`.",
    SWE-agent's and OpenHands' editor; django-11999 logs it), so the file keeps its text."""
    args = _args(action)
    if action.tool not in _EDITORS or args is None or args.get("command") != "create":
        return False
    return tool_path(args) in texts or bool(_REFUSED.search(observation))


def content_digest_key(path: str, text: str) -> object:
    """What a whole write of `text` to `path` is keyed by (`environment.step` digests it)."""
    return whole_write_key(path, text)[3]
