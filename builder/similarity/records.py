"""The comparable evidence about one unit of work (see `features`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from builder.similarity import intent as it


@dataclass(frozen=True, slots=True)
class LineRange:
    """Lines read: 1-based inclusive; `end=None` is to end of file; `start<0` counts from end."""

    start: int
    end: int | None


WHOLE = LineRange(1, None)


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of work: `key` is its identity, `view` the lines of its output (or, for a
    read, of its file) that are shown; None is all of them. `on_failure`: it runs only if
    what precedes it fails (the right side of `||`)."""

    kind: str  # read, search, list, run, python, test, write, edit, vcs, output, submit, tool,
    # text, state (an action that only changes the shell: `cd d`, `export X=1`)
    key: tuple
    view: tuple[LineRange, ...] | None = None
    on_failure: bool = False


@dataclass(frozen=True, slots=True)
class Features:
    """Comparable evidence about one unit of work."""

    intent: str
    verb: str
    op: str | None = None  # finer kind: write/append/edit/delete/view/install/...
    files: frozenset[str] = frozenset()
    patterns: frozenset[str] = frozenset()
    ranges: tuple[LineRange, ...] = ()
    content: str | None = None  # heredoc, python -c code, echoed text, new_str, file_text
    old_text: str | None = None  # the anchor of an edit (old_str, sed -i script)
    git: str | None = None  # the git subcommand
    revisions: frozenset[str] = frozenset()  # git revisions/ranges and view options (--cached)
    stages: tuple[str, ...] = ()  # downstream filters that change what is shown (`| wc -l`)
    sink: str | None = None  # where stdout goes instead of the agent's screen (`> out.txt`)
    end: str | None = None  # "tail": only the last lines of the output are shown (`| tail -5`)
    flags: frozenset[str] = frozenset()
    editor: bool = False  # came from an editor tool (field-wise comparison applies)


SUBMIT_FEATURES = Features(intent=it.SUBMIT, verb="submit")


SHOWN_KINDS = frozenset({"grep", "sed", "file", "lines"})


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
        if not isinstance(row, list | tuple) or len(row) != 5:
            raise ValueError(
                f"a shown read is [kind, path, flags, patterns, lines], not {row!r:.80}"
            )
        kind, path, flags, patterns, lines = row
        first = str(patterns[0]) if patterns else ""
        if kind not in SHOWN_KINDS or (kind == "lines" and not first.isdigit()):
            raise ValueError(f"a shown read of kind {kind!r} with patterns {patterns!r:.40}")
        return cls(str(kind), str(path), tuple(flags), tuple(patterns), tuple(lines))
