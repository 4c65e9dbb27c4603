"""Second round of plausible rewrites of real actions (shell, editor, SWE-agent), each with a
fixed label: still the same action (`s2_*`) or a different one (`d2_*`), and why.

Written after the first round, before any of their pairs were scored: they probe cases the
first round does not (adjacent windows, other targets of the same edit, tails of the same
output, inverted filters, reordered flags and operands).
"""

from __future__ import annotations

import re

from mining_editor import _editor, _tool
from mining_raw import Spec, category
from mining_shell import Rewrite, _cmd, _with

_HEAD = re.compile(r"\| head -(\d+)")
_FLAGS = re.compile(r"\b(ls|grep) -([a-zA-Z]{2,})\b")


def s2_head_n(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or not _HEAD.search(c):
        return None
    return _with(spec, _HEAD.sub(r"| head -n \1", c)), "`head -N` and `head -n N` are one option"


def s2_flag_order(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = _FLAGS.search(c or "")
    if c is None or m is None or "\n" in c:
        return None
    flags = m.group(2)[::-1]
    return _with(spec, c[: m.start(2)] + flags + c[m.end(2) :]), "the same flags in another order"


def s2_rm_order(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r"(.*\brm (?:-f )?)(\S+(?: \S+)+)", (_cmd(spec) or "").strip())
    if m is None:
        return None
    files = m.group(2).split()
    return _with(spec, m.group(1) + " ".join(reversed(files))), "the same files in another order"


def s2_abs_script(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r"cd /testbed && python (\S+\.py)", (_cmd(spec) or "").strip())
    if m is None:
        return None
    return _with(spec, f"python /testbed/{m.group(1)}"), (
        "the same script by its absolute path (the repository is installed; cwd is moot)"
    )


def s2_create_heredoc(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "create")
    text = str((args or {}).get("file_text", ""))
    if args is None or "EOF" in text:
        return None
    body = text if text.endswith("\n") else text + "\n"
    return _with(spec, f"cat <<'EOF' > {args['path']}\n{body}EOF"), (
        "writes the same text to the same file through the shell"
    )


def s2_view_sed(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or not args.get("view_range"):
        return None
    a, b = args["view_range"]
    return _with(spec, f"sed -n '{a},{b}p' {args['path']}"), (
        "the same lines of the same file, without line numbers"
    )


def d2_head_tail(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = _HEAD.search(c or "")
    if c is None or m is None:
        return None
    return _with(spec, c[: m.start()] + f"| tail -{m.group(1)}" + c[m.end() :]), (
        "the last lines of the output instead of the first"
    )


def d2_grep_invert(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = re.search(r"\| grep (-i )?(\"[^\"]+\"|\S+)", c or "")
    if c is None or m is None or "-v" in m.group(0):
        return None
    return _with(spec, c[: m.start()] + "| grep -v " + c[m.start() + 7 :]), (
        "keeps the lines the filter dropped and drops the ones it kept"
    )


def d2_type_dir(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "find " not in c or "-type f" not in c:
        return None
    return _with(spec, c.replace("-type f", "-type d", 1)), "directories instead of files"


def d2_sed_i_line(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r"sed -i '(\d+)s(.*)", (_cmd(spec) or "").strip(), re.S)
    if m is None:
        return None
    return _with(spec, f"sed -i '{int(m.group(1)) + 40}s{m.group(2)}"), (
        "the same substitution on another line"
    )


def d2_view_next(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or not args.get("view_range"):
        return None
    a, b = args["view_range"]
    return _tool({**args, "view_range": [b + 1, b + 1 + (b - a)]}), (
        "the next window of the file, no line shared"
    )


def d2_replace_other_file(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "str_replace") or _editor(spec, "create")
    if args is None:
        return None
    paths = sorted(
        {
            x["arguments"]["path"]
            for x in ctx
            if x["tool"] == "str_replace_editor" and "path" in x["arguments"]
        }
        - {args["path"]}
    )
    paths = [p for p in paths if p.rsplit("/", 1)[-1] != args["path"].rsplit("/", 1)[-1]]
    if not paths:
        return None
    return _tool({**args, "path": paths[0]}), "the same edit applied to another file"


def d2_heredoc_other_file(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = re.match(r"cat <<'EOF' > (\S+)\n", c or "")
    if c is None or m is None:
        return None
    return _with(spec, c[: m.start(1)] + "other_" + m.group(1) + c[m.end(1) :]), (
        "writes the same text to another file"
    )


def d2_swe_edit_lines(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.match(r"edit (\d+):(\d+)\n", _cmd(spec) or "")
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    far = (a + 100, b + 100) if a < 100 else (a - 100, b - 100)
    c = _cmd(spec) or ""
    return _with(spec, f"edit {far[0]}:{far[1]}\n" + c[m.end() :]), (
        "the same text over other lines of the file"
    )


def d2_ls_parent(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r"ls (\S+)/([^/\s]+)", (_cmd(spec) or "").strip())
    if m is None or category(spec) != "list" or "." in m.group(2):
        return None
    return _with(spec, f"ls {m.group(1)}"), "lists the parent directory instead"


def d2_run_other(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r"(.*\bpython3? \S+\.py) (\S+)", (_cmd(spec) or "").strip())
    if m is None:
        return None
    return _with(spec, f"{m.group(1)} {m.group(2)}.test_generic"), (
        "runs one test module instead of the whole label"
    )


SAME_MORE: list[Rewrite] = [
    s2_head_n,
    s2_flag_order,
    s2_rm_order,
    s2_abs_script,
    s2_create_heredoc,
    s2_view_sed,
]
DIFFERENT_MORE: list[Rewrite] = [
    d2_head_tail,
    d2_grep_invert,
    d2_type_dir,
    d2_sed_i_line,
    d2_view_next,
    d2_replace_other_file,
    d2_heredoc_other_file,
    d2_swe_edit_lines,
    d2_ls_parent,
    d2_run_other,
]
