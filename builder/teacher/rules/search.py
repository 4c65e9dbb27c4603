"""Search hits (grep -rn, rg, git grep, ag): group them by file and cap the matches per file.

The agent searches to find where something is; the first few matches of a file say that, the
next fifty mostly repeat it. Hits are grouped by file (consecutive lines of one file, as grep
and rg print them); matches after the first `per_file` of a file are folded into one line
saying how many there were, and files after the first `max_files` into one line naming them.
"""

from __future__ import annotations

import re

from builder.similarity import intent as it
from builder.teacher.output import CompressorOutput
from builder.teacher.rules.base import Span, fold, listed, plural, units
from schemas.steps import Action

SEARCH_VERBS = frozenset({"grep", "rg", "ag", "ack", "search_dir", "search_file"})

# path:line:text, path-line-text (context), path:text (grep -r without -n)
_WITH_FILE = re.compile(r"^(?P<file>[^\s:]*[/.][^\s:]*?)(?::(?P<line>\d+))?[:-](?P<text>.*)$")
_LINE_ONLY = re.compile(r"^\d+[:-]")
_SEPARATOR = {"--", ""}
MIN_SHARE = 0.8  # of the non-empty lines that must look like hits


def is_search_command(action: Action | None) -> bool:
    """True when the command searches file contents (grep, rg, git grep, ...)."""
    return any(u.intent == it.SEARCH and u.verb in SEARCH_VERBS for u in units(action))


def cap_matches_per_file(
    raw: str, action: Action | None = None, *, per_file: int = 3, max_files: int = 20
) -> CompressorOutput | None:
    """Group hits by file; keep the first `per_file` matches of each file and the first
    `max_files` files, folding the rest with counts and file names. Applies to the output of
    a search command, or any output whose lines are mostly `path:line:text` hits; not
    applicable when every file has few matches and there are few files."""
    lines = raw.split("\n")
    search = is_search_command(action)
    keys = _file_keys(lines, single_file=search)
    if keys is None:
        return None
    hit_lines = [i for i, k in enumerate(keys) if k is not None]
    if not hit_lines or (not search and len(hit_lines) < 2):
        return None
    blocks = _blocks(keys)
    spans: list[Span] = []
    for file, first, last in blocks[:max_files]:
        hits = [i for i in range(first, last + 1) if keys[i] is not None]
        if len(hits) > per_file:
            extra = len(hits) - per_file
            where = "" if file == "" else f" in {file}"
            spans.append(
                Span(hits[per_file] + 1, last + 1, f"{plural(extra, 'more match')}{where}")
            )
    rest = blocks[max_files:]
    if rest:
        count = sum(1 for i in range(rest[0][1], len(keys)) if keys[i] is not None)
        files = listed((f for f, _, _ in rest), limit=4)
        summary = f"{plural(count, 'match')} in {plural(len(rest), 'more file')}: {files}"
        spans.append(Span(rest[0][1] + 1, rest[-1][2] + 1, summary))
    return fold(raw, spans)


def _file_keys(lines: list[str], *, single_file: bool) -> list[str | None] | None:
    """The file of each hit line ("" for hits of a single-file search, None for other lines),
    or None when the output does not look like search hits. `N:text` lines count as hits only
    with `single_file` (the command searched): numbered file views look the same."""
    content = [line for line in lines if line.strip() not in _SEPARATOR]
    if not content:
        return None
    line_only = sum(bool(_LINE_ONLY.match(line)) for line in content)
    if single_file and line_only >= MIN_SHARE * len(content):
        return ["" if _LINE_ONLY.match(line) else None for line in lines]
    keys = [_hit_file(line) for line in lines]
    if sum(k is not None for k in keys) < MIN_SHARE * len(content):
        return None
    return keys


def _hit_file(line: str) -> str | None:
    match = _WITH_FILE.match(line)
    return match.group("file") if match else None


def _blocks(keys: list[str | None]) -> list[tuple[str, int, int]]:
    """(file, first index, last index) of each run of hits of one file; lines that are not
    hits (separators, messages) stay with the run before them."""
    blocks: list[tuple[str, int, int]] = []
    for i, key in enumerate(keys):
        if key is None:
            continue
        if blocks and blocks[-1][0] == key:
            blocks[-1] = (key, blocks[-1][1], i)
        else:
            blocks.append((key, i, i))
    return blocks
