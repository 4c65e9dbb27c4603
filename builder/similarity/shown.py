"""What a read the log shows printed, and what a narrower read of the same file prints.

The labels of the near-miss benchmark compare what two reads print (normalised output lines,
Jaccard >= 0.75: `benchmarks/near_miss_execute.py`). The gate has no candidate's output, but
when the log shows a read's output and nothing was written since, some other reads of the
same file print a part of it that can be computed without running anything:
- **A narrower grep.** Every line with `_latex` in it has `latex` in it, so on the same file,
  with the same options, `grep _latex F` prints the lines of `grep latex F`'s output that
  hold `_latex` (round 1 design pair sympy-21930: `grep -n "latex"` then `grep -n "_latex"` on
  `secondquant.py`, the same lines). Only patterns that are plain text are read so (a BRE
  with no `.`, `*`, `[`, `$` or backslash class; `-F`; an ERE with none of its operators); a
  leading `^` anchors. `-w`, `-x`, `-v`, `-o`, `-c`, `-l` and several files are not.
- **A sed range that ends sooner.** `sed -n '/S/,/E/p' F` prints from the first line matching
  S to the next line matching E, then looks for S again (GNU sed manual, "Range Addresses").
  When the logged output of `/S/,/E1/p` has S only on its first line, it is one range and S
  is nowhere after it in the file, so `/S/,/E2/p` prints the same lines up to the first one
  after the first that matches E2, and nothing more (round 3 design pair django-15277:
  `/class MaxLengthValidator/,/compare/p` then `/,/return/p`, 8 of 9 lines shown by both).
  When no logged line matches E2 the range runs past what the log shows, and nothing is
  derived.
- **A `| head -n K` that cuts nothing.** The same read with its first K lines, when the log
  shows it printing K lines or fewer.

- **A file, or lines of it, shown whole.** `cat F` (also `cat -n`, `nl -ba`, an editor's
  whole view) settles every line view, literal grep and sed range of F; `sed -n 'a,bp' F`
  (or `head`, an editor's `view_range`) settles views inside lines a..b.

The derivations are `derived_reads`, the shapes of read they apply to `read_shapes`.
Such a unit becomes `("printed", file)` with its normalised lines (`printed_overlap`
compares two, as the labels do). The fact comes from one turn's own output when the turn is
one such read (the logged reference's, as `outcomes` and `no_match` read it), and holds for
later turns while every turn between only reads (`environment.facts`). Outputs a harness may
have cut (over `_MAX_CHARS`, or `_MAX_FILE_CHARS` for a whole file) and outputs that are not
the file's lines (an abbreviated editor view, `cat -A`'s line-end marks) are not recorded.
When what both sides print is known, their printed lines are the whole answer
(`compare.semantic_in`).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from builder.similarity.derived_reads import output_of
from builder.similarity.no_match import printed_nothing
from builder.similarity.read_shapes import NUMBERED, bounded, grep_of, plain_read_of, sed_range_of
from builder.similarity.records import WHOLE, LineRange, Shown, Unit

__all__ = ["Shown", "carried", "logged_reads", "normalised", "printed_overlap", "printed_unit"]

_MAX_CHARS = 4000
_MAX_LINES = 120
_MAX_FILE_CHARS = 9000  # under mini-swe-agent's 10,000-character cut
_MAX_FILE_LINES = 300
_LINE_NUMBER = re.compile(r"^\s*(\d+)(?:\t|\u2192|$)")  # cat -n, nl -ba, editors; Read's arrow
_EDITOR_HEADER = "Here's the result of running `cat -n` on"
_NUMBER_FIRST = re.compile(r"^\s*\d+(?:[\s:]|$)")
# Not a file's lines: SWE-agent's editor shows a large file abbreviated ("<NOTE>This file is
# too large to display entirely. Showing abbreviated version. ...", then `21 ... eliding lines
# 21-85 ...`), and SWE-agent 0.x's viewer frames its window ("[File: F (N lines total)]",
# "(104 more lines above)", lines as `105:text`)
_SWE_FRAME = re.compile(r"^\[File: .* \(\d+ lines total\)\]$")
_SWE_MORE = re.compile(r"^\(\d+ more lines (?:above|below)\)$")
_SWE_NUMBER = re.compile(r"^(\d+):")
_ABBREVIATED = re.compile(
    r"\.\.\. eliding lines \d+-\d+ \.\.\.|^<NOTE>|too large to display"
    f"|{_SWE_FRAME.pattern}|{_SWE_MORE.pattern}"
)
_KEPT = 8  # logged reads carried at once
_SEPARATOR = re.compile(r"^-+$")


def file_lines(lines: Sequence[str], first: int = 1) -> tuple[str, ...] | None:
    """Lines `first`, `first + 1`, ... of a file from a read's output: numbering that counts
    from `first` removed, an editor's header dropped. None where the output is not those
    lines: another editor answer (a directory listing), an editor's answer without its
    numbering (a refusal), numbered lines that count otherwise, or an abbreviated view
    (SWE-agent's editor shows a large file as `21 ... eliding lines 21-85 ...`)."""
    if lines and _SWE_FRAME.match(lines[0]):
        return _swe_window(lines[1:], first)
    if any(_ABBREVIATED.search(line) for line in lines):
        return None
    editor = bool(lines) and lines[0].startswith(_EDITOR_HEADER)
    if editor:
        lines = lines[1:]
    elif lines and lines[0].startswith("Here's"):
        return None
    numbers = [m[1] if (m := _LINE_NUMBER.match(line)) else None for line in lines]
    if lines and numbers == [str(first + i) for i in range(len(lines))]:
        return tuple(_LINE_NUMBER.sub("", line, count=1) for line in lines)
    numbered = sum(bool(_NUMBER_FIRST.match(line)) for line in lines)
    return None if editor or not lines or numbered * 2 > len(lines) else tuple(lines)


def _swe_window(lines: Sequence[str], first: int) -> tuple[str, ...] | None:
    """The lines of SWE-agent 0.x's viewer window (after its `[File: F (N lines total)]`):
    `(104 more lines above)` / `(k more lines below)` dropped, `105:text` counting from
    `first` (0.x `defaults.sh` `_print`), else None."""
    body = [line for line in lines if not _SWE_MORE.match(line)]
    numbers = [m[1] if (m := _SWE_NUMBER.match(line)) else None for line in body]
    if not body or numbers != [str(first + i) for i in range(len(body))]:
        return None
    return tuple(_SWE_NUMBER.sub("", line, count=1) for line in body)


def shows_line_ends(lines: Sequence[str]) -> bool:
    """Whether an output marks its line ends (`cat -A`, `cat -e`: a `$` after every line),
    which a read's key leaves out (`| cat -A` is a pager there): not the file's lines."""
    full = [line for line in lines if line]
    return bool(full) and sum(line.endswith("$") for line in full) * 2 > len(full)


def logged_reads(units: Sequence[Unit], printed: str) -> tuple[Shown, ...]:
    """The read a turn's own output shows: the turn is one grep, sed range, whole-file read or
    line view, and its output is whole (not over what harnesses cut) and has no error line."""
    if len(units) != 1 or len(printed) > _MAX_FILE_CHARS or printed_nothing(printed):
        return ()
    lines = tuple(line.rstrip() for line in printed.strip("\n").split("\n"))
    if len(lines) > _MAX_FILE_LINES or any(
        line.startswith(("grep:", "sed:", "Binary file")) for line in lines
    ):
        return ()
    unit = units[0]
    if shows_line_ends(lines):
        return ()
    if (plain := plain_read_of(unit)) is not None and plain[1] == (WHOLE,):
        whole = file_lines(lines)
        return () if whole is None else (Shown("file", plain[0], (), (), whole),)
    if plain is not None and len(plain[1]) == 1 and bounded(plain[1][0]):
        first, last = plain[1][0].start, plain[1][0].end or 0
        part = file_lines(lines, first)
        if part is None or len(part) != last - first + 1:
            return ()  # past the end of the file, or not those lines
        return (Shown("lines", plain[0], (), (str(first),), part),)
    if len(printed) > _MAX_CHARS or len(lines) > _MAX_LINES:
        return ()
    if (grep := grep_of(unit)) is not None and unit.view is None:
        path, flags, pattern = grep
        return (Shown("grep", path, tuple(sorted(flags)), (pattern,), lines),)
    if (sed := sed_range_of(unit)) is not None:
        path, start, end = sed
        return (Shown("sed", path, (), (start, end), lines),)
    return ()


def carried(kept: tuple[Shown, ...], new: tuple[Shown, ...]) -> tuple[Shown, ...]:
    return (kept + new)[-_KEPT:]


def normalised(lines: Iterable[str]) -> Counter[str]:
    """Output lines as the labels compare them: numbering and separators removed, blank lines
    dropped (`near_miss_execute.lines_of`, for one file's reads). The numbering goes first, so
    a read with `cat -n` and one without show the same lines (a numbered blank line is its
    number alone; a numbered `-----` is a separator too)."""
    out: Counter[str] = Counter()
    for line in lines:
        text = line.strip()
        if text.isdigit():
            continue
        text = NUMBERED.sub("", line.rstrip(), count=1).strip()
        if text and not _SEPARATOR.match(text):
            out[text] += 1
    return out


def _line_id(line: str) -> int:
    return int(hashlib.sha256(line.encode("utf-8")).hexdigest()[:12], 16) + 1


@lru_cache(maxsize=8192)
def printed_unit(unit: Unit, shown: tuple[Shown, ...]) -> Unit | None:
    """The unit as what it prints, when the log determines that: key `("printed", file)`, view
    one point per normalised line (repeats kept), for `printed_overlap`. Cached: the gate asks
    for every unit of every candidate and reference of a step in one environment."""
    found = output_of(unit, shown)
    if found is None:
        return None
    path, lines = found
    points = sorted(_line_id(line) for line, n in normalised(lines).items() for _ in range(n))
    return Unit("read", ("printed", path), tuple(LineRange(p, p) for p in points))


def is_printed(unit: Unit) -> bool:
    return bool(unit.key) and unit.key[0] == "printed"


def printed_overlap(xs: Sequence[LineRange], ys: Sequence[LineRange]) -> float:
    """Jaccard of two outputs' normalised lines as multisets (1 for two empty outputs)."""
    a, b = Counter(r.start for r in xs), Counter(r.start for r in ys)
    union = sum((a | b).values())
    return sum((a & b).values()) / union if union else 1.0
