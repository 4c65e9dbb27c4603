"""File views (cat, nl -ba, sed -n, head, editor `view`, SWE-agent `open`): an outline.

Reading a whole Python file mostly serves to find one's way in it: imports, classes and the
signatures of functions say what is where, and the agent reads the body it needs next. So
function bodies are folded, each into a line naming the function and its docstring's first
line; signatures, decorators, class lines, imports and module-level statements stay. When
the command asked for a region (a line range), bodies inside that region are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from builder.similarity import intent as it
from builder.similarity.records import WHOLE, Features, LineRange
from builder.teacher.output import CompressorOutput
from builder.teacher.rules.base import Span, fold, units
from schemas.steps import Action

VIEW_VERBS = frozenset(
    {"cat", "nl", "sed", "head", "tail", "less", "more", "bat", "view", "open", "goto", "awk"}
)
PYTHON = (".py", ".pyi")
_NUMBERED = (
    re.compile(r"^\s*(\d+)\t(.*)$"),  # cat -n, nl -ba, editor view
    re.compile(r"^(\d+):(.*)$"),  # SWE-agent open / goto
    re.compile(r"^(\d+)\|(.*)$"),  # OpenHands edit previews
)
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")
_DOC = re.compile(r'^\s*[rRbBuU]?("""|\'\'\')\s*(.*?)\s*(?:\1)?\s*$')
MIN_SHARE = 0.8


@dataclass(frozen=True, slots=True)
class CodeLine:
    raw_line: int  # 1-based line of the raw output
    file_line: int  # line number in the file
    code: str


def view_unit(action: Action | None) -> Features | None:
    """The read of one file this command does, if it is one."""
    reads = [u for u in units(action) if u.intent == it.READ and u.verb in VIEW_VERBS]
    return reads[0] if len(reads) == 1 else None


def fold_function_bodies(
    raw: str, action: Action | None = None, *, min_body: int = 3
) -> CompressorOutput | None:
    """Keep signatures, decorators, classes, imports and module-level code of a Python file
    view; fold each function body of `min_body`+ lines outside the region the command asked
    for (all of them for a whole-file read). Applies when the command reads one .py file
    (or, with no command, when the output is a numbered listing with Python functions); not
    applicable to edits, other languages, or views whose every function lies inside the
    asked-for region."""
    unit = view_unit(action)
    if action is not None and (unit is None or not _python_files(unit)):
        return None
    found = _code_lines(raw, _first_line(unit))
    if found is None or (unit is None and not found[1]):
        return None
    code = found[0]
    region = _region(unit)
    spans = []
    for name, first, last, doc in _bodies([c.code for c in code]):
        lines = code[first : last + 1]
        if len(lines) < min_body:
            continue
        if region is not None and any(_inside(c.file_line, region) for c in lines):
            continue
        summary = f"body of {name}: {doc}" if doc else f"body of {name}"
        spans.append(Span(lines[0].raw_line, lines[-1].raw_line, summary))
    return fold(raw, spans)


def _python_files(unit: Features) -> bool:
    return any(PurePosixPath(f).suffix in PYTHON for f in unit.files)


def _first_line(unit: Features | None) -> int:
    if unit is None or not unit.ranges or unit.ranges[0].start < 1:
        return 1
    return unit.ranges[0].start


def _region(unit: Features | None) -> tuple[LineRange, ...] | None:
    """The line ranges asked for, or None for a whole-file read."""
    if unit is None or not unit.ranges or unit.ranges == (WHOLE,):
        return None
    return unit.ranges


def _inside(line: int, region: tuple[LineRange, ...]) -> bool:
    return any(r.start <= line and (r.end is None or line <= r.end) for r in region)


def _code_lines(raw: str, first_line: int) -> tuple[list[CodeLine], bool] | None:
    """The code lines of the view with their file line numbers (from the `N\\t` / `N:` / `N|`
    prefixes when most lines have one, else counted from `first_line`), and whether the
    view was numbered."""
    lines = raw.split("\n")
    content = [line for line in lines if line.strip()]
    if not content:
        return None
    for pattern in _NUMBERED:
        matches = [pattern.match(line) for line in lines]
        if sum(m is not None for m in matches) >= MIN_SHARE * len(content):
            numbered = [
                CodeLine(i + 1, int(m.group(1)), m.group(2))
                for i, m in enumerate(matches)
                if m is not None
            ]
            return numbered, True
    return [CodeLine(i + 1, first_line + i, line) for i, line in enumerate(lines)], False


def _bodies(code: list[str]) -> list[tuple[str, int, int, str]]:
    """(function name, first body index, last body index, docstring first line) of every
    outermost function in `code`; nested functions fold with their parent."""
    out = []
    i = 0
    while i < len(code):
        match = _DEF.match(code[i])
        if match is None:
            i += 1
            continue
        indent = len(match.group(1).expandtabs())
        start = _signature_end(code, i) + 1
        end = start
        while end < len(code) and (not code[end].strip() or _indent(code[end]) > indent):
            end += 1
        last = end - 1
        while last >= start and not code[last].strip():
            last -= 1
        if last >= start:
            out.append((match.group(2), start, last, _docstring(code[start])))
        i = max(end, i + 1)
    return out


def _signature_end(code: list[str], i: int) -> int:
    """The index of the line that ends the `def` starting at `i` (its `:` with parens closed)."""
    depth = 0
    for j in range(i, min(i + 30, len(code))):
        text = code[j].split("#", 1)[0].rstrip()
        depth += sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        if depth <= 0 and text.endswith(":"):
            return j
    return i


def _indent(line: str) -> int:
    return len(line.expandtabs()) - len(line.expandtabs().lstrip())


def _docstring(line: str) -> str:
    match = _DOC.match(line)
    return match.group(2).rstrip("\"'").strip() if match else ""
