"""Targets judged over repeats, and the one table `make bench` ends with.

A bench measures a figure several times (each repeat with its own floor) and judges each
target with `judge`: the median over the repeats, how many repeats met it, and whether the
target is met. Most targets are read on the median; a target that names a share of repeats
("in at least 4 of 5 repeats") is met when at least that share met it, rounded up
(`of=(4, 5)`: 4 of 5, 3 of 3, 1 of 1). A repeat exactly at a `<=` or `>=` limit meets it;
`<` ("under 1.5 GiB") needs strictly less.

Each bench writes its judged targets as a `verdicts` list in its `.bench/*.json`, with the
machine stamped in (`benchmarks.machine`); this script reads them all and prints one table:

    python benchmarks/verdicts.py [--bench .bench]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OPS = {"<=": float.__le__, "<": float.__lt__, ">=": float.__ge__}


@dataclass(frozen=True)
class Target:
    """A figure's limit: `name` says what is measured, `unit` how to show it (x, GiB, %);
    `of` (k, n) asks k of every n repeats to meet it instead of the median."""

    name: str
    op: str
    limit: float
    unit: str = "x"
    of: tuple[int, int] | None = None

    def meets(self, value: float) -> bool:
        return OPS[self.op](float(value), float(self.limit))

    def needed(self, repeats: int) -> int:
        """Repeats that must meet it under the `of` rule: k/n of them, rounded up."""
        assert self.of is not None
        k, n = self.of
        return -(-repeats * k // n)


def judge(target: Target, values: list[float]) -> dict[str, Any]:
    """The verdict on one target over the repeats' values (one value per repeat)."""
    if not values:
        raise ValueError(f"{target.name}: no repeat to judge")
    median = statistics.median(values)
    met_count = sum(target.meets(v) for v in values)
    if target.of is None:
        rule, met = "median", target.meets(median)
    else:
        needed = target.needed(len(values))
        rule, met = f"{needed} of {len(values)} repeats", met_count >= needed
    return {
        "target": target.name,
        "op": target.op,
        "limit": target.limit,
        "unit": target.unit,
        "rule": rule,
        "median": median,
        "values": values,
        "repeats_met": met_count,
        "repeats": len(values),
        "met": met,
    }


def shown(value: float, unit: str) -> str:
    if unit == "%":
        return f"{value:.1%}"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:.2f} {unit}"


FIRST = ("run", "side_by_side", "scale", "ray")  # issue 31's targets in its order, then the rest


def _order(path: Path) -> tuple[int, str]:
    return (FIRST.index(path.stem) if path.stem in FIRST else len(FIRST), path.stem)


def rows(bench: Path) -> tuple[list[list[str]], list[str]]:
    """Table rows from every `.bench/*.json` holding `verdicts`, and the machines they name."""
    table: list[list[str]] = []
    machines: list[str] = []
    for path in sorted(bench.glob("*.json"), key=_order):
        try:
            figures = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(figures, dict) or not figures.get("verdicts"):
            continue
        machine = figures.get("machine") or {}
        cpu = f"{machine.get('cpu_model', '?')} ({machine.get('cores', '?')} cores)"
        if cpu not in machines:
            machines.append(cpu)
        load = f"{machine.get('loadavg_1m_before', '?')} -> {machine.get('loadavg_1m_after', '?')}"
        finished = machine.get("finished", "?")
        for v in figures["verdicts"]:
            table.append([
                v["target"],
                f"{v['op']} {shown(v['limit'], v['unit'])}",
                shown(v["median"], v["unit"]),
                f"{v['repeats_met']}/{v['repeats']}",
                v["rule"],
                "met" if v["met"] else "NOT MET",
                load,
                finished,
            ])  # fmt: skip
    return table, machines


HEADER = ["target", "limit", "median", "met in", "judged on", "verdict", "load 1m", "finished"]


def render(bench: Path) -> str:
    """The verdict table, with the CPU model and core count it was measured on."""
    table, machines = rows(bench)
    if not table:
        return f"no verdicts in {bench}/*.json: run the benches first (make bench)"
    widths = [max(len(r[i]) for r in [HEADER, *table]) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in [HEADER, *table]]  # fmt: skip
    lines.insert(1, "  ".join("-" * w for w in widths))
    note = "" if len(machines) == 1 else "  (NOT one machine: compare with care)"
    met = sum(r[5] == "met" for r in table)
    return "\n".join([
        f"CPU: {'; '.join(machines)}{note}",
        *lines,
        f"{met} of {len(table)} targets met",
    ])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, default=ROOT / ".bench")
    args = parser.parse_args()
    print(render(args.bench))


if __name__ == "__main__":
    sys.exit(main())
