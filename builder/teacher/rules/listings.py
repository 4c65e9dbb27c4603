"""Directory listings (find, ls -R, ls -l of paths, tree): fold deep subtrees.

The agent lists files to find its way around; the top levels of the tree say where things
are, the leaves of deep subtrees (.git internals, vendored packages, test data) rarely matter.
Entries deeper than a depth are folded into one line per subtree naming it and counting its
entries. The depth is the deepest of 3, 2, 1 that leaves at most `max_lines` lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from builder.similarity import intent as it
from builder.teacher.output import CompressorOutput
from builder.teacher.render import line_count
from builder.teacher.rules.base import Span, fold, plural, units
from schemas.steps import Action

DEPTHS = (3, 2, 1)
MIN_SHARE = 0.8  # of the non-empty lines that must be entries
_LS_LONG = re.compile(
    r"^[-dlcbps][-rwxsStT@+.]{9}\S*\s+\d+\s+\S+\s+\S+\s+[\d,]+\s+\S+\s+\S+\s+\S+\s+(.+)$"
)
_TREE = re.compile(r"^((?:[│|]\s{2,3}|\s{4})*)[├└|`]-*[─-]+\s(.*)$")
_SECTION = re.compile(r"^([^\s:]+):$")


@dataclass(frozen=True, slots=True)
class Entry:
    line: int  # 1-based
    parts: tuple[str, ...]  # path components below the listing's root


def is_listing_command(action: Action | None) -> bool:
    """True when the command lists files (ls, tree, find, du)."""
    return any(u.intent == it.LIST or u.verb == "find" for u in units(action))


def fold_deep_entries(
    raw: str, action: Action | None = None, *, max_lines: int = 100
) -> CompressorOutput | None:
    """Fold the entries below the deepest depth (3, 2 or 1 levels under the listing's root)
    that keeps at most `max_lines` lines: one line per folded subtree, naming it and counting
    its entries. Reads `find` / path-per-line output, `ls -l` lines ending in paths, `tree`
    and `ls -R`. Not applicable when the output is not a listing or has nothing that deep."""
    lines = raw.split("\n")
    entries = None
    for reader in _READERS:
        entries = reader(lines)
        if entries is not None:
            break
    if not entries or not (is_listing_command(action) or len(entries) >= 5):
        return None
    total = line_count(raw)
    chosen: list[Span] = []
    for depth in DEPTHS:
        chosen = _spans(entries, depth)
        if total - sum(s.end - s.start for s in chosen) <= max_lines:
            break
    return fold(raw, chosen)


def _spans(entries: list[Entry], depth: int) -> list[Span]:
    """One span per run of consecutive entries deeper than `depth` under one subtree."""
    spans: list[Span] = []
    run: list[Entry] = []
    for entry in [*entries, Entry(0, ())]:  # the sentinel closes the last run
        deep = len(entry.parts) > depth
        joins = deep and run and entry.parts[:depth] == run[0].parts[:depth]
        if run and not (joins and entry.line == run[-1].line + 1):
            where = "/".join(run[0].parts[:depth])
            summary = f"{plural(len(run), 'entry')} under {where}/"
            spans.append(Span(run[0].line, run[-1].line, summary))
            run = []
        if deep:
            run.append(entry)
    return spans


def _paths(lines: list[str]) -> list[Entry] | None:
    """`find` output and `ls -l` lines that end in paths, relative to their common root."""
    found: list[tuple[int, str]] = []
    content = 0
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        content += 1
        long = _LS_LONG.match(text)
        path = long.group(1) if long else text
        if " " in path or "/" not in path or path.endswith(":"):
            continue
        found.append((number, path))
    if not found or len(found) < MIN_SHARE * content:
        return None
    split = [(n, tuple(p for p in path.split("/") if p not in ("", "."))) for n, path in found]
    root = _common_prefix([parts[:-1] for _, parts in split])
    return [Entry(n, parts[len(root) :]) for n, parts in split]


def _tree(lines: list[str]) -> list[Entry] | None:
    """`tree` output: the depth is the indentation, the parts are the names above."""
    stack: list[str] = []
    entries: list[Entry] = []
    content = sum(bool(line.strip()) for line in lines)
    for number, line in enumerate(lines, 1):
        match = _TREE.match(line)
        if match is None:
            continue
        level = len(match.group(1)) // 4
        stack = [*stack[:level], match.group(2).strip()]
        entries.append(Entry(number, tuple(stack)))
    return entries if entries and len(entries) >= MIN_SHARE * (content - 2) else None


def _ls_recursive(lines: list[str]) -> list[Entry] | None:
    """`ls -R`: every entry of a section `dir:` lies below that directory."""
    sections = [(n, m.group(1)) for n, line in enumerate(lines, 1) if (m := _SECTION.match(line))]
    if len(sections) < 2 or not all("/" in name for _, name in sections[1:]):
        return None
    root = tuple(p for p in sections[0][1].split("/") if p not in ("", "."))
    entries: list[Entry] = []
    for index, (number, name) in enumerate(sections):
        end = sections[index + 1][0] - 1 if index + 1 < len(sections) else len(lines)
        parts = tuple(p for p in name.split("/") if p not in ("", "."))[len(root) :]
        entries.append(Entry(number, parts))
        for line in range(number + 1, end + 1):
            entries.append(Entry(line, (*parts, lines[line - 1].strip())))
    return entries


def _common_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    if not paths:
        return ()
    prefix = paths[0]
    for parts in paths[1:]:
        size = 0
        while size < min(len(prefix), len(parts)) and prefix[size] == parts[size]:
            size += 1
        prefix = prefix[:size]
    return prefix


_READERS: tuple[Callable[[list[str]], list[Entry] | None], ...] = (_ls_recursive, _tree, _paths)
