"""The package layout: a map that is current, one meaning per file name, no import cycles."""

from __future__ import annotations

import ast
import importlib
from collections import defaultdict
from pathlib import Path

from tests.layout_map import (
    BUILDER,
    MAX_TOP_MODULES,
    ORDER,
    REPO,
    SHARED_NAMES,
    docstring,
    entries,
    field,
    readme_with_map,
)


def test_the_readme_map_is_generated_from_the_package_docstrings() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme == readme_with_map(readme), "run: python -m tests.layout_map --write"


def test_the_map_names_every_package_and_top_level_module_once() -> None:
    assert sorted(ORDER) == entries()


def test_builder_holds_few_modules_directly() -> None:
    top = [p for p in BUILDER.glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= MAX_TOP_MODULES, sorted(p.name for p in top)


def test_no_two_modules_share_a_file_name() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in BUILDER.rglob("*.py"):
        if path.name not in SHARED_NAMES:
            by_name[path.name].append(str(path.relative_to(REPO)))
    assert {n: ps for n, ps in by_name.items() if len(ps) > 1} == {}


def test_every_package_names_what_it_reads_writes_and_its_entry_point() -> None:
    for name in (n for n in ORDER if n.endswith("/")):
        doc = docstring(BUILDER / name / "__init__.py")
        assert field(doc, "Reads") and field(doc, "Writes"), name
        entry = field(doc, "Entry point").strip("`")
        module, _, attr = entry.rpartition(".")
        try:
            target = importlib.import_module(entry)
        except ModuleNotFoundError:
            target = getattr(importlib.import_module(module), attr)
        assert target is not None, entry


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Every import between builder's modules, those inside functions and under
    TYPE_CHECKING included; `from pkg import mod` is an edge to the module, not the package."""
    paths = {_module_name(p): p for p in BUILDER.rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in paths}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in paths]
                targets = subs if len(subs) == len(node.names) else [*subs, base]
            else:
                continue
            for target in targets:
                found = resolve(target) if target.startswith("builder") else None
                if found and found != module:
                    graph[module].add(found)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_builder_has_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_sees_a_cycle_hidden_inside_a_function() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
