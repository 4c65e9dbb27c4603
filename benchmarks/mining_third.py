"""Third round of plausible rewrites of real actions, each with a fixed label: still the same
action (`s3_*`) or a different one (`d3_*`), and why.

Written after the second round's held-out look, before any of their pairs were scored: they
probe editor calls and searches further (same file name in another directory, half a file,
an edit that changes nothing, a definition instead of every use, other file types).
"""

from __future__ import annotations

import re

from mining_editor import _editor, _tool
from mining_raw import Spec
from mining_shell import Rewrite, _cmd, _with

_INCLUDE = re.compile(r'--include="\*\.(\w+)"')
_GREP_WORD = re.compile(r'\bgrep ((?:-\w+ )*)"(\w+)"')
_DEF = re.compile(r'\bgrep ((?:-\w+ )*)"(?:def|class) (\w+)"')


def s3_unquote(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = _GREP_WORD.search(c or "")
    if c is None or m is None:
        return None
    return _with(spec, c[: m.start()] + f"grep {m.group(1)}{m.group(2)}" + c[m.end() :]), (
        "a one-word pattern needs no quotes"
    )


def s3_include_space(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or not _INCLUDE.search(c):
        return None
    return _with(spec, _INCLUDE.sub(r"--include '*.\1'", c)), "the same option, other spelling"


def s3_dot_path(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = re.search(r" (pandas/\S+)", c or "")
    if c is None or m is None:
        return None
    return _with(spec, c[: m.start(1)] + "./" + c[m.start(1) :]), "`./` prefix only"


def s3_view_dot(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or not args["path"].startswith("/testbed/"):
        return None
    path = "/testbed/./" + args["path"][len("/testbed/") :]
    return _tool({**args, "path": path}), "the same file, with a `./` in its path"


def d3_view_sibling(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or args["path"].count("/") < 4:
        return None
    head, base = args["path"].rsplit("/", 1)
    dirs = sorted(
        {
            x["arguments"]["path"].rsplit("/", 1)[0]
            for x in ctx
            if x["tool"] == "str_replace_editor" and x["arguments"].get("path", "").count("/") > 3
        }
        - {head}
    )
    if not dirs:
        return None
    return _tool({**args, "path": f"{dirs[0]}/{base}"}), (
        "a file of the same name in another directory"
    )


def d3_create_half(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "create")
    lines = str((args or {}).get("file_text", "")).splitlines(keepends=True)
    if args is None or len(lines) < 8:
        return None
    return _tool({**args, "file_text": "".join(lines[: len(lines) // 2])}), (
        "writes only the first half of the file"
    )


def d3_noop_replace(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "str_replace")
    if args is None or args.get("new_str") == args.get("old_str"):
        return None
    return _tool({**args, "new_str": args["old_str"]}), "replaces the anchor with itself"


def d3_def_only(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = _DEF.search(c or "")
    if c is not None and m is not None:
        return _with(spec, c[: m.start()] + f'grep {m.group(1)}"{m.group(2)}"' + c[m.end() :]), (
            "every use of the name instead of its definition"
        )
    m = _GREP_WORD.search(c or "")
    if c is None or m is None or "v" in m.group(1) or m.group(2) in ("def", "class"):
        return None  # a `grep -v` filter drops lines: no definition to look for
    kind = "class" if m.group(2)[0].isupper() else "def"
    return _with(
        spec, c[: m.start()] + f'grep {m.group(1)}"{kind} {m.group(2)}"' + c[m.end() :]
    ), "only the definition instead of every use of the name"


def d3_include_ext(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or '--include="*.py"' not in c:
        return None
    return _with(spec, c.replace('--include="*.py"', '--include="*.pyx"')), (
        "searches other file types"
    )


def d3_files_count(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "grep -l " not in c:
        return None
    return _with(spec, c.replace("grep -l ", "grep -c ", 1)), (
        "a count per file instead of the names of the matching files"
    )


SAME_THIRD: list[Rewrite] = [s3_unquote, s3_include_space, s3_dot_path, s3_view_dot]
DIFFERENT_THIRD: list[Rewrite] = [
    d3_view_sibling,
    d3_create_half,
    d3_noop_replace,
    d3_def_only,
    d3_include_ext,
    d3_files_count,
]
