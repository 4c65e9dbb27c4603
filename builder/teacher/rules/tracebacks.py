"""Python tracebacks: keep the frames of the repository, fold the frames of installed libraries.

An agent fixes code in its repository; frames inside site-packages or the standard library say
only which library the call went through. Runs of such frames become one line naming the
packages; the innermost frame of each traceback (where the exception was raised) and the
exception line itself are always kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from builder.teacher.output import CompressorOutput
from builder.teacher.rules.base import Span, fold, listed, plural
from schemas.steps import Action

_START = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
_FRAME = re.compile(r'^(\s*)File "([^"]+)", line \d+')
_LIBRARY = re.compile(
    r"(site-packages|dist-packages)/|/lib/python\d[\d.]*/|^<frozen |^/usr/lib/|^/usr/local/lib/"
)
_INSTALLED = re.compile(r"(?:site-packages|dist-packages)/([^/]+)")
_STDLIB = re.compile(r"/lib/python\d[\d.]*/([^/]+)")


@dataclass(frozen=True, slots=True)
class Frame:
    start: int  # 1-based line of `File "..."`
    end: int  # last line of its source excerpt
    path: str


def is_library(path: str) -> bool:
    """True for installed packages, the standard library and frozen modules."""
    return _LIBRARY.search(path) is not None


def fold_library_frames(raw: str, action: Action | None = None) -> CompressorOutput | None:
    """Fold runs of library frames (site-packages, dist-packages, /usr/lib/python...,
    <frozen ...>) in every Python traceback of the output, naming the packages; frames in the
    repository, the innermost frame and the exception lines are kept. Not applicable without a
    traceback that has a foldable library frame."""
    lines = raw.split("\n")
    spans: list[Span] = []
    for frames in _tracebacks(lines):
        foldable = frames[:-1]  # the innermost frame shows where the error was raised
        group: list[Frame] = []
        for frame in [*foldable, None]:
            if frame is not None and is_library(frame.path):
                group.append(frame)
                continue
            if group:
                packages = listed(_package(f.path) for f in group)
                summary = f"{plural(len(group), 'library frame')} ({packages})"
                spans.append(Span(group[0].start, group[-1].end, summary))
                group = []
    return fold(raw, spans)


def _tracebacks(lines: list[str]) -> list[list[Frame]]:
    """The frames of each traceback in `lines`, outermost first."""
    out: list[list[Frame]] = []
    i = 0
    while i < len(lines):
        if not _START.match(lines[i]):
            i += 1
            continue
        frames: list[Frame] = []
        i += 1
        while i < len(lines):
            match = _FRAME.match(lines[i])
            if match is None:
                break
            indent = len(match.group(1))
            j = i + 1
            while j < len(lines) and _indent(lines[j]) > indent and not _FRAME.match(lines[j]):
                j += 1
            frames.append(Frame(i + 1, j, match.group(2)))
            i = j
        if frames:
            out.append(frames)
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip()) if line.strip() else 0


def _package(path: str) -> str:
    if path.startswith("<frozen "):
        return path.strip("<>").removeprefix("frozen ")
    match = _INSTALLED.search(path) or _STDLIB.search(path)
    name = match.group(1) if match else path.rsplit("/", 1)[-1]
    return name.removesuffix(".py")
