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

Such a unit becomes `("printed", file)` with its normalised lines (`printed_overlap`
compares two, as the labels do). The fact comes from one turn's own output when the turn is
one such read (the logged reference's, as `outcomes` and `no_match` read it), and holds for
later turns while every turn between only reads (`environment.facts`). Outputs a harness may
have cut (over `_MAX_CHARS`) are not recorded.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from builder.similarity.no_match import printed_nothing
from builder.similarity.records import WHOLE, LineRange, Unit

_MAX_CHARS = 4000
_MAX_LINES = 120
_MAX_FILE_CHARS = 9000  # under mini-swe-agent's 10,000-character cut
_MAX_FILE_LINES = 300
_PLAIN = (None, frozenset(), None, (), ())
_LINE_NUMBER = re.compile(r"^\s*(\d+)(?:\t|\u2192|$)")  # cat -n, nl -ba, editors; Read's arrow
_EDITOR_HEADER = "Here's the result of running `cat -n` on"
_NUMBER_FIRST = re.compile(r"^\s*\d+(?:\s|$)")
# SWE-agent's editor shows a large file abbreviated ("<NOTE>This file is too large to display
# entirely. Showing abbreviated version. ...", then `21 ... eliding lines 21-85 ...`)
_ABBREVIATED = re.compile(r"\.\.\. eliding lines \d+-\d+ \.\.\.|^<NOTE>|too large to display")
_KEPT = 8  # logged reads carried at once
_GREP_FLAGS = frozenset({"-i", "-E", "-F"})
_RANGE = re.compile(r"^/((?:[^/\\]|\\.)+)/,/((?:[^/\\]|\\.)+)/p$")
_NUMBERED = re.compile(r"^\s*\d+(\t|[:-]|  )")
_SEPARATOR = re.compile(r"^-+$")
_ERE_OPS = frozenset("+?(){}|")


@dataclass(frozen=True, slots=True)
class Shown:
    """One logged read: the kind ("grep", "sed", "file": the whole file, "lines": lines from
    `patterns[0]` on), the file, its options, its pattern(s), and the lines it printed (as
    printed, right-stripped; a file's lines without their numbering)."""

    kind: str
    path: str
    flags: tuple[str, ...]
    patterns: tuple[str, ...]
    lines: tuple[str, ...]

    def as_list(self) -> list:
        return [self.kind, self.path, list(self.flags), list(self.patterns), list(self.lines)]

    @classmethod
    def from_list(cls, row: Sequence) -> Shown:
        kind, path, flags, patterns, lines = row
        return cls(str(kind), str(path), tuple(flags), tuple(patterns), tuple(lines))


def _grep(unit: Unit) -> tuple[str, frozenset[str], str] | None:
    """(file, flags, pattern) of a one-command grep of one file with options `_GREP_FLAGS`."""
    if unit.kind != "search" or len(unit.key) != 1 or not isinstance(unit.key[0], tuple):
        return None
    key = unit.key[0]
    if len(key) != 6 or key[:2] != ("search", "grep") or key[5] != ():
        return None
    patterns, flags, paths = key[2], key[3], key[4]
    if not isinstance(flags, frozenset) or not flags <= _GREP_FLAGS:
        return None
    if len(patterns) != 1 or len(paths) != 1:
        return None
    return str(paths[0]), flags, str(patterns[0])


def _sed_range(unit: Unit) -> tuple[str, str, str] | None:
    """(file, start pattern, end pattern) of `sed -n '/S/,/E/p' F` showing all it prints."""
    key = unit.key
    if unit.kind != "read" or len(key) != 8 or key[0] != "read":
        return None
    if unit.view not in (None, (WHOLE,)):
        return None
    if len(key[1]) != 1 or len(key[2]) != 1 or key[3:] != (None, frozenset(), None, (), ()):
        return None
    found = _RANGE.match(str(key[2][0]))
    return (str(key[1][0]), found[1], found[2]) if found else None


def _plain_read(unit: Unit) -> tuple[str, tuple[LineRange, ...]] | None:
    """(file, lines shown) of a read of one file with no script or option that changes it."""
    key = unit.key
    if unit.kind != "read" or len(key) != 8 or key[0] != "read" or key[2] != ():
        return None
    if len(key[1]) != 1 or key[3:] != _PLAIN:
        return None
    return str(key[1][0]), unit.view or (WHOLE,)


def file_lines(lines: Sequence[str]) -> tuple[str, ...] | None:
    """The file's lines from a whole read's output: numbering (1, 2, ... in order) removed, an
    editor's header dropped. None where the output is not the whole file: another editor
    answer (a directory listing), or numbered lines with a gap (SWE-agent's editor shows a
    large file abbreviated: `21 ... eliding lines 21-85 ...`)."""
    if any(_ABBREVIATED.search(line) for line in lines):
        return None
    editor = bool(lines) and lines[0].startswith(_EDITOR_HEADER)
    if editor:
        lines = lines[1:]
    elif lines and lines[0].startswith("Here's"):
        return None
    numbers = [m[1] if (m := _LINE_NUMBER.match(line)) else None for line in lines]
    if lines and numbers == [str(i) for i in range(1, len(lines) + 1)]:
        return tuple(_LINE_NUMBER.sub("", line, count=1) for line in lines)
    numbered = sum(bool(_NUMBER_FIRST.match(line)) for line in lines)
    return None if editor or not lines or numbered * 2 > len(lines) else tuple(lines)


def shows_line_ends(lines: Sequence[str]) -> bool:
    """Whether an output marks its line ends (`cat -A`, `cat -e`: a `$` after every line),
    which a read's key leaves out (`| cat -A` is a pager there): not the file's lines."""
    full = [line for line in lines if line]
    return bool(full) and sum(line.endswith("$") for line in full) * 2 > len(full)


def _bounded(view: LineRange) -> bool:
    return view.start > 0 and view.end is not None and view.end >= view.start


def numbered_part(lines: Sequence[str], first: int) -> tuple[str, ...] | None:
    """Lines `first`, `first + 1`, ... of a file from a view's output: numbering that counts
    from `first` removed, an editor's header dropped; None for output numbered otherwise."""
    if lines and lines[0].startswith(_EDITOR_HEADER):
        lines = lines[1:]
    if any(_ABBREVIATED.search(line) for line in lines):
        return None
    numbers = [m[1] if (m := _LINE_NUMBER.match(line)) else None for line in lines]
    if lines and numbers == [str(first + i) for i in range(len(lines))]:
        return tuple(_LINE_NUMBER.sub("", line, count=1) for line in lines)
    numbered = sum(bool(_NUMBER_FIRST.match(line)) for line in lines)
    return None if numbered * 2 > len(lines) else tuple(lines)


def literal(pattern: str, flags: Iterable[str] = ()) -> tuple[str, bool] | None:
    """(text, anchored at the line start) of a pattern that matches only that text; None for a
    pattern with regex operators."""
    options = set(flags)
    if "-F" in options:
        return (pattern, False) if "\n" not in pattern else None
    anchored = pattern.startswith("^")
    body, out, i = pattern[anchored:], [], 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            if i + 1 >= len(body) or body[i + 1].isalnum() or body[i + 1] in "()|{}+?<>`'":
                return None  # `\w`, `\(`, `\|`: operators
            out.append(body[i + 1])
            i += 2
            continue
        if char in ".*[$" or ("-E" in options and (char in _ERE_OPS or char == "^")):
            return None
        out.append(char)
        i += 1
    return "".join(out), anchored


def _matches(line: str, lit: tuple[str, bool], fold: bool) -> bool:
    text, anchored = lit
    if fold:
        line, text = line.lower(), text.lower()
    return line.startswith(text) if anchored else text in line


def _narrower(inner: tuple[str, bool], outer: tuple[str, bool], fold: bool) -> bool:
    """Whether every line `inner` matches is matched by `outer`."""
    a, b = (inner[0].lower(), outer[0].lower()) if fold else (inner[0], outer[0])
    if outer[1]:
        return inner[1] and a.startswith(b)
    return b in a


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
    if (plain := _plain_read(unit)) is not None and plain[1] == (WHOLE,):
        whole = file_lines(lines)
        return () if whole is None else (Shown("file", plain[0], (), (), whole),)
    if plain is not None and len(plain[1]) == 1 and _bounded(plain[1][0]):
        first, last = plain[1][0].start, plain[1][0].end or 0
        part = numbered_part(lines, first)
        if part is None or len(part) != last - first + 1:
            return ()  # past the end of the file, or not those lines
        return (Shown("lines", plain[0], (), (str(first),), part),)
    if len(printed) > _MAX_CHARS or len(lines) > _MAX_LINES:
        return ()
    if (grep := _grep(unit)) is not None and unit.view is None:
        path, flags, pattern = grep
        return (Shown("grep", path, tuple(sorted(flags)), (pattern,), lines),)
    if (sed := _sed_range(unit)) is not None:
        path, start, end = sed
        return (Shown("sed", path, (), (start, end), lines),)
    return ()


def carried(kept: tuple[Shown, ...], new: tuple[Shown, ...]) -> tuple[Shown, ...]:
    return (kept + new)[-_KEPT:]


def _text(line: str, numbered: bool) -> str:
    return _NUMBERED.sub("", line, count=1) if numbered else line


def _grep_output(unit: Unit, shown: Shown) -> tuple[str, ...] | None:
    grep = _grep(unit)
    if grep is None or shown.kind != "grep" or grep[0] != shown.path:
        return None
    _, flags, pattern = grep
    if tuple(sorted(flags)) != shown.flags:
        return None
    lines = shown.lines
    if pattern != shown.patterns[0]:
        inner, outer = literal(pattern, flags), literal(shown.patterns[0], flags)
        fold = "-i" in flags
        if inner is None or outer is None or not _narrower(inner, outer, fold):
            return None
        numbered = all(_NUMBERED.match(line) for line in lines)
        lines = tuple(line for line in lines if _matches(_text(line, numbered), inner, fold))
    return _cut(lines, unit.view)


def _cut(lines: tuple[str, ...], view: tuple[LineRange, ...] | None) -> tuple[str, ...] | None:
    """The lines a `| head -n K` view keeps, when it is one; None for another view."""
    if view is None or view == (WHOLE,):
        return lines
    if len(view) == 1 and view[0].start == 1 and view[0].end is not None:
        return lines[: view[0].end]
    return None


def _sed_output(unit: Unit, shown: Shown) -> tuple[str, ...] | None:
    sed = _sed_range(unit)
    if sed is None or shown.kind != "sed" or sed[0] != shown.path:
        return None
    _, start, end = sed
    if start != shown.patterns[0]:
        return None
    if end == shown.patterns[1]:
        return shown.lines
    begin, stop = literal(start), literal(end)
    lines = shown.lines
    if begin is None or stop is None or not lines or not _matches(lines[0], begin, False):
        return None
    if any(_matches(line, begin, False) for line in lines[1:]):
        return None  # more than one range, or one that could start again
    last = next((i for i in range(1, len(lines)) if _matches(lines[i], stop, False)), None)
    return None if last is None else lines[: last + 1]


def _sed_ranges(lines: Sequence[str], start: str, end: str) -> tuple[str, ...] | None:
    """What `sed -n '/start/,/end/p'` prints of a whole file (GNU sed: the end is looked for
    from the line after the start; then the start again)."""
    begin, stop = literal(start), literal(end)
    if begin is None or stop is None:
        return None
    out: list[str] = []
    inside = False
    for line in lines:
        if inside:
            out.append(line)
            inside = not _matches(line, stop, False)
        elif _matches(line, begin, False):
            out.append(line)
            inside = True
    return tuple(out)


def _view_lines(lines: Sequence[str], view: tuple[LineRange, ...]) -> tuple[str, ...] | None:
    """The lines a view shows; None for one that reaches past the end: `sed` shows less, but
    an editor refuses it ("Invalid `view_range`": OpenHands', SWE-agent's str_replace_editor),
    and the unit does not say which ran."""
    out: list[str] = []
    for r in view:
        if max(r.start, r.end or 0) > len(lines) or -r.start > len(lines):
            return None
        out += lines[r.start :] if r.start < 0 else lines[r.start - 1 : r.end]
    return tuple(out)


def _file_output(unit: Unit, shown: Shown) -> tuple[str, ...] | None:
    """What a read of a file whose whole text the log shows prints."""
    if (plain := _plain_read(unit)) is not None:
        return _view_lines(shown.lines, plain[1]) if plain[0] == shown.path else None
    if (sed := _sed_range(unit)) is not None:
        return _sed_ranges(shown.lines, sed[1], sed[2]) if sed[0] == shown.path else None
    grep = _grep(unit)
    if grep is None or grep[0] != shown.path:
        return None
    _, flags, pattern = grep
    lit = literal(pattern, flags)
    if lit is None:
        return None
    found = tuple(line for line in shown.lines if _matches(line, lit, "-i" in flags))
    return _cut(found, unit.view)


def _lines_output(unit: Unit, shown: Shown) -> tuple[str, ...] | None:
    """What a line view prints inside lines of a file the log shows (`sed -n 926,940p` after
    `sed -n 926,945p`)."""
    plain = _plain_read(unit)
    if plain is None or plain[0] != shown.path:
        return None
    first = int(shown.patterns[0])
    last = first + len(shown.lines) - 1
    out: list[str] = []
    for view in plain[1]:
        if not _bounded(view) or view.start < first or (view.end or 0) > last:
            return None
        out += shown.lines[view.start - first : (view.end or 0) - first + 1]
    return tuple(out)


_DERIVE = {
    "grep": _grep_output,
    "sed": _sed_output,
    "file": _file_output,
    "lines": _lines_output,
}


def output_of(unit: Unit, shown: Iterable[Shown]) -> tuple[str, tuple[str, ...]] | None:
    """(file, lines printed) of a read the log's reads determine; None when none does."""
    for logged in reversed(tuple(shown)):  # the latest first
        lines = _DERIVE[logged.kind](unit, logged)
        if lines is not None:
            return logged.path, lines
    return None


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
        text = _NUMBERED.sub("", line.rstrip(), count=1).strip()
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
