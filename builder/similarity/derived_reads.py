"""What a read prints, from what the log shows a read of the same file printed (`shown`).

- a narrower grep: the logged lines that hold its pattern (every line with `_latex` in it has
  `latex` in it);
- `sed -n '/S/,/E2/p'` after `/S/,/E1/p`: GNU sed prints from the first line matching S to the
  next line matching E, then looks for S again ("Range Addresses"); with S only on the first
  logged line there is one range and no S after it, so the range ends at the first logged
  line after the first that matches E2, or runs past the log (nothing derived);
- a `| head -n K`: the first K lines;
- a file shown whole: any line view, literal grep or sed range of it; lines shown from `a`:
  a view inside them. A view past the end is not settled: `sed` shows less, but an editor
  refuses it ("Invalid `view_range`": OpenHands', SWE-agent's str_replace_editor), and the
  unit does not say which ran.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from builder.similarity.read_shapes import (
    NUMBERED,
    bounded,
    grep_of,
    literal,
    matches,
    narrower,
    plain_read_of,
    sed_range_of,
)
from builder.similarity.records import WHOLE, LineRange, Shown, Unit


def _text(line: str, numbered: bool) -> str:
    return NUMBERED.sub("", line, count=1) if numbered else line


def _grep_output(unit: Unit, shown: Shown) -> tuple[str, ...] | None:
    grep = grep_of(unit)
    if grep is None or shown.kind != "grep" or grep[0] != shown.path:
        return None
    _, flags, pattern = grep
    if tuple(sorted(flags)) != shown.flags:
        return None
    lines = shown.lines
    if pattern != shown.patterns[0]:
        inner, outer = literal(pattern, flags), literal(shown.patterns[0], flags)
        fold = "-i" in flags
        if inner is None or outer is None or not narrower(inner, outer, fold):
            return None
        numbered = all(NUMBERED.match(line) for line in lines)
        return _found(lines, inner, fold, unit.view, numbered)
    return _cut(lines, unit.view)


def _found(
    lines: Sequence[str],
    lit: tuple[str, bool],
    fold: bool,
    view: tuple[LineRange, ...] | None,
    numbered: bool = False,
) -> tuple[str, ...] | None:
    """What a literal grep prints of `lines` (`grep -n`'s numbers aside), cut by its view."""
    return _cut(tuple(line for line in lines if matches(_text(line, numbered), lit, fold)), view)


def _cut(lines: tuple[str, ...], view: tuple[LineRange, ...] | None) -> tuple[str, ...] | None:
    """The lines a `| head -n K` view keeps, when it is one; None for another view."""
    if view is None or view == (WHOLE,):
        return lines
    if len(view) == 1 and view[0].start == 1 and view[0].end is not None:
        return lines[: view[0].end]
    return None


def _sed_output(unit: Unit, shown: Shown) -> tuple[str, ...] | None:
    sed = sed_range_of(unit)
    if sed is None or shown.kind != "sed" or sed[0] != shown.path:
        return None
    _, start, end = sed
    if start != shown.patterns[0]:
        return None
    if end == shown.patterns[1]:
        return shown.lines
    begin, stop = literal(start), literal(end)
    lines = shown.lines
    if begin is None or stop is None or not lines or not matches(lines[0], begin, False):
        return None
    if any(matches(line, begin, False) for line in lines[1:]):
        return None  # more than one range, or one that could start again
    last = next((i for i in range(1, len(lines)) if matches(lines[i], stop, False)), None)
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
            inside = not matches(line, stop, False)
        elif matches(line, begin, False):
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
    if (plain := plain_read_of(unit)) is not None:
        return _view_lines(shown.lines, plain[1]) if plain[0] == shown.path else None
    if (sed := sed_range_of(unit)) is not None:
        return _sed_ranges(shown.lines, sed[1], sed[2]) if sed[0] == shown.path else None
    grep = grep_of(unit)
    if grep is None or grep[0] != shown.path:
        return None
    _, flags, pattern = grep
    lit = literal(pattern, flags)
    return None if lit is None else _found(shown.lines, lit, "-i" in flags, unit.view)


def _lines_output(unit: Unit, shown: Shown) -> tuple[str, ...] | None:
    """What a line view prints inside lines of a file the log shows (`sed -n 926,940p` after
    `sed -n 926,945p`)."""
    plain = plain_read_of(unit)
    if plain is None or plain[0] != shown.path:
        return None
    first = int(shown.patterns[0])
    last = first + len(shown.lines) - 1
    out: list[str] = []
    for view in plain[1]:
        if not bounded(view) or view.start < first or (view.end or 0) > last:
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
