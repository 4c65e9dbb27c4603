"""The README's layout map, generated from each package's docstring, and the layout's rules.

`python -m tests.layout_map --write` rewrites the map between the README's markers;
tests/test_layout.py checks that the map is current and that the rules hold.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILDER = REPO / "builder"
BEGIN, END = "<!-- layout-map:begin -->", "<!-- layout-map:end -->"

# Data-flow order: what comes first in the pipeline is read first.
ORDER = (
    "cli/",
    "config/",
    "ingest/",
    "ingest/formats/",
    "steps/",
    "teacher/",
    "teacher/rules/",
    "nap/",
    "similarity/",
    "select.py",
    "run/",
    "run/ray/",
    "report/",
    "report/svg/",
    "plan/",
    "publish/",
    "export/",
    "scrub/",
    "storage/",
    "llm/",
    "llm/batch/",
    "llm/local/",
    "evaluate/",
    "view/",
    "calibrate.py",
    "inspect.py",
    "errors.py",
    "startup.py",
)
MAX_TOP_MODULES = 8
WIDTH = 100
SHARED_NAMES = {"__init__.py", "base.py"}  # a package's face and its protocol


def docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def summary(doc: str) -> str:
    """The docstring's first sentence, on one line."""
    first = doc.split("\n\n", 1)[0].replace("\n", " ")
    return first.split(". ")[0].rstrip(".")


def field(doc: str, name: str) -> str:
    """`Reads: … Writes: … Entry point: …` of a package docstring, one value each."""
    text = " ".join(doc.split())
    match = re.search(rf"{name}: (.+?)(?= (?:Reads|Writes|Entry point): |$)", text)
    return match.group(1).rstrip(".") if match else ""


def entries() -> list[str]:
    """Every package and top-level module of builder/, as ORDER names them."""
    found = [p.name for p in BUILDER.glob("*.py") if p.name != "__init__.py"]
    found += [
        str(p.parent.relative_to(BUILDER)) + "/"
        for p in BUILDER.rglob("__init__.py")
        if p.parent != BUILDER
    ]
    return sorted(found)


def wrapped(line: str) -> list[str]:
    return textwrap.wrap(line, WIDTH, subsequent_indent=" " * 20, break_on_hyphens=False)


def render() -> str:
    lines = ["```", "builder/"]
    for name in ORDER:
        path = BUILDER / name / "__init__.py" if name.endswith("/") else BUILDER / name
        doc = docstring(path)
        depth = name.rstrip("/").count("/")
        label = "  " * (depth + 1) + name.rstrip("/").split("/")[-1]
        label += "/" if name.endswith("/") else ""
        lines += wrapped(f"{label:<20}{summary(doc)}")
        reads, writes, entry = field(doc, "Reads"), field(doc, "Writes"), field(doc, "Entry point")
        if reads or writes:
            lines += wrapped(f"{'':<20}reads {reads}; writes {writes}")
        if entry:
            lines.append(f"{'':<20}entry {entry}")
    lines += [
        "schemas/            one module per table: Arrow schema + record type",
        "pipelines/          demo.yaml, openai.yaml, anthropic.yaml, vllm.yaml",
        "tests/              mirrors builder/",
        "benchmarks/         what `make bench` runs",
        "```",
    ]
    return "\n".join(lines)


def readme_with_map(readme: str) -> str:
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{render()}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite README.md's map")
    args = parser.parse_args()
    readme = REPO / "README.md"
    if args.write:
        readme.write_text(readme_with_map(readme.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
