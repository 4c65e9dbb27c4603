"""Plausible rewrites of real editor and SWE-agent actions, each with a fixed label."""

from __future__ import annotations

import re

from mining_raw import Spec
from mining_shell import _cmd, _with


def _editor(spec: Spec, command: str) -> dict | None:
    if spec["tool"] != "str_replace_editor" or spec["arguments"].get("command") != command:
        return None
    return spec["arguments"]


def _tool(args: dict) -> Spec:
    return {"tool": "str_replace_editor", "arguments": args}


def s_view_shell(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None:
        return None
    rng = args.get("view_range")
    if rng:
        command = f"cat -n {args['path']} | sed -n '{rng[0]},{rng[1]}p'"
        return _with(spec, command), "the same lines of the same file through the shell"
    return _with(spec, f"cat -n {args['path']}"), "the whole file through the shell"


def s_view_wider(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or not args.get("view_range") or args["view_range"][0] <= 3:
        return None
    a, b = args["view_range"]
    return _tool({**args, "view_range": [a - 2, b + 2]}), "a slightly wider window, same lines"


def s_new_ws(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "str_replace") or _editor(spec, "create")
    if args is None:
        return None
    key = "new_str" if args["command"] == "str_replace" else "file_text"
    text = str(args.get(key, ""))
    changed = text.rstrip() if text != text.rstrip() else text + "\n"
    return _tool({**args, key: changed}), "new text differs only in trailing whitespace"


def d_view_far(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or not args.get("view_range"):
        return None
    a, b = args["view_range"]
    return _tool({**args, "view_range": [b + 200, b + 200 + (b - a)]}), "a disjoint window"


def d_view_other_file(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None:
        return None
    base = args["path"].rsplit("/", 1)[-1]
    paths = sorted(
        p
        for p in {x["arguments"]["path"] for x in ctx if _editor(x, "view")}
        if p.rsplit("/", 1)[-1] != base  # `hello.py` and `/abs/hello.py` were one file
    )
    if not paths:
        return None
    return _tool({**args, "path": paths[0]}), "the same window of another file"


def d_view_whole(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or not args.get("view_range"):
        return None
    whole = {k: v for k, v in args.items() if k != "view_range"}
    return _tool(whole), "the whole file instead of a window of it"


def d_other_new(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "str_replace")
    if args is None:
        return None
    news = [
        x["arguments"]["new_str"]
        for x in ctx
        if _editor(x, "str_replace") and x["arguments"]["old_str"] != args["old_str"]
    ]
    if not news:
        return None
    return _tool({**args, "new_str": news[0]}), "same anchor, an unrelated replacement"


def d_other_anchor(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "str_replace")
    if args is None:
        return None
    others = [
        x["arguments"]
        for x in ctx
        if _editor(x, "str_replace")
        and x["arguments"]["path"] == args["path"]
        and x["arguments"]["old_str"] != args["old_str"]
    ]
    if not others:
        return None
    return _tool({**args, "old_str": others[0]["old_str"]}), "another anchor in the same file"


def d_other_content(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "create")
    if args is None:
        return None
    texts = [
        x["arguments"]["file_text"]
        for x in ctx
        if _editor(x, "create") and x["arguments"]["file_text"] != args["file_text"]
    ]
    if not texts:
        return None
    return _tool({**args, "file_text": texts[0]}), "same path, other content"


def d_open_far(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r'open "?([^"\s]+)"? (\d+)', (_cmd(spec) or "").strip())
    if m is None:
        return None
    line = int(m.group(2))
    far = line + 400 if line < 400 else line - 400
    return _with(spec, f"open {m.group(1)} {far}"), "opens the file 400 lines away"


def s_open_quotes(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r'open "([^"\s]+)" (\d+)', (_cmd(spec) or "").strip())
    if m is None:
        return None
    return _with(spec, f"open {m.group(1)} {m.group(2)}"), "quoting only"
