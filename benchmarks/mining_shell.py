"""Plausible rewrites of real shell actions, each with a fixed label: still the same action
(`s_*`) or a different one (`d_*`), and why."""

from __future__ import annotations

import re
from collections.abc import Callable

from mining_raw import Spec, category

Rewrite = Callable[[Spec, list[Spec]], "tuple[Spec, str] | None"]
_QUOTED = re.compile(r'"([^"$\'\\`]*)"')
_SED_RANGE = re.compile(r"sed -n '(\d+),(\d+)p'")
_PY_SCRIPT = re.compile(r"\bpython3? (\S+\.py)\b")


def _cmd(spec: Spec) -> str | None:
    return spec["command"] if spec["tool"] == "bash" else None


def _with(spec: Spec, command: str) -> Spec:
    return {"tool": "bash", "command": command}


def s_cd_root(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or category(spec) in ("swe-agent", "submit"):
        return None
    if c.startswith("cd /testbed && "):
        return _with(spec, c[len("cd /testbed && ") :]), "cd to the repository root is a no-op"
    if c.startswith("cd ") or not any("/testbed" in (_cmd(s) or "") for s in ctx):
        return None
    return _with(spec, "cd /testbed && " + c), "cd to the repository root is a no-op"


def s_root_path(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "/testbed/" not in c or c.startswith("cd ") or "\n" in c:
        return None
    return _with(spec, c.replace("/testbed/", "")), "repository-root prefix dropped from paths"


def s_quotes(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or not _QUOTED.search(c):
        return None
    return _with(spec, _QUOTED.sub(r"'\1'", c)), "double quotes swapped for single quotes"


def s_python3(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or not re.search(r"\bpython3? \S", c):
        return None
    swapped = (
        re.sub(r"\bpython3 ", "python ", c)
        if "python3 " in c
        else c.replace("python ", "python3 ", 1)
    )
    return _with(spec, swapped), "python vs python3: the same interpreter in these images"


def s_stderr(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or category(spec) != "run" or "2>&1" in c or ">" in c:
        return None
    return _with(spec, c + " 2>&1"), "stderr merged into the output the agent sees anyway"


def s_head_more(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = re.search(r"\| head -(\d+)$", c or "")
    if c is None or m is None:
        return None
    n = int(m.group(1))
    return _with(spec, c[: m.start()] + f"| head -{n + 10}"), "a few more lines of the same output"


def s_nl_sed(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r"nl -ba (\S+) \| sed -n '(\d+),(\d+)p'", (_cmd(spec) or "").strip())
    if m is None:
        return None
    path, a, b = m.groups()
    return _with(spec, f"sed -n '{a},{b}p' {path}"), "the same lines, without line numbers"


def d_wc(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or category(spec) not in ("search", "list") or "| head" in c:
        return None
    return _with(spec, c + " | wc -l"), "counts the results instead of showing them"


def d_redirect(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or category(spec) != "run" or ">" in c or "pip " in c:
        return None  # `pip install > log` still installs: not clearly another action
    return _with(spec, c + " > output.log"), "output goes to a file; the agent sees none of it"


def d_other_script(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = _PY_SCRIPT.search(c or "")
    if c is None or m is None:
        return None
    others = sorted({s for x in ctx for s in _PY_SCRIPT.findall(_cmd(x) or "")} - {m.group(1)})
    if not others:
        return None
    return _with(spec, c.replace(m.group(1), others[0])), "runs a different script"


def d_sed_far(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = _SED_RANGE.search(c or "")
    if c is None or m is None:
        return None
    a, b = int(m.group(1)) + 300, int(m.group(2)) + 300
    return _with(spec, c[: m.start()] + f"sed -n '{a},{b}p'" + c[m.end() :]), "disjoint lines"


def d_grep_count(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or not re.search(r"\bgrep -n ", c) or "|" in c:
        return None
    return _with(
        spec, c.replace("grep -n ", "grep -c ", 1)
    ), "counts matches instead of showing them"


def d_grep_pattern(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = re.search(r'\bgrep (?:-\w+ )*"([^"]+)"', c or "")
    if c is None or m is None or "-v" in c[m.start() : m.start(1)]:
        return None  # a `grep -v` filter's pattern may exclude nothing either way
    seen = {p for x in ctx for p in re.findall(r'\bgrep (?:-\w+ )*"([^"]+)"', _cmd(x) or "")}
    others = sorted(seen - {m.group(1)})
    if not others:
        return None
    return _with(spec, c[: m.start(1)] + others[0] + c[m.end(1) :]), "searches for something else"


def d_find_ext(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or '-name "*.py"' not in c:
        return None
    return _with(spec, c.replace('-name "*.py"', '-name "*.txt"')), "looks for another file type"


def d_ls_recursive(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = (_cmd(spec) or "").strip()
    if re.fullmatch(r"ls -R (\S+)", c):
        return _with(spec, c.replace("ls -R ", "ls ")), "one level instead of the whole tree"
    target = c.split()[-1] if len(c.split()) > 1 else "."
    if re.search(r"\.\w+$", target):
        return None  # `ls -R file.py` lists the same one file
    if re.fullmatch(r"ls( -\w+)?( \S+)?", c) and "R" not in c:
        return _with(spec, c.replace("ls", "ls -R", 1)), "the whole tree instead of one level"
    return None


def d_rm_subset(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r"(.*\brm (?:-f )?)(\S+)( \S+)+", (_cmd(spec) or "").strip())
    if m is None:
        return None
    return _with(spec, m.group(1) + m.group(2)), "deletes only one of the files"
