"""Real steps from the sample trajectories, found by the command that produced them."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from builder.ingest.formats import detect
from builder.ingest.formats.source import Source
from builder.steps.pairing import EligibilityRules, build_steps
from schemas.steps import StepRecord
from tests.paths import SAMPLES, SHARED

SWE_SMITH = SHARED / "swe-smith-messages" / "ft_xml_example.jsonl"
DJANGO = SHARED / "mini-swe-agent" / "django__django-16255" / "django__django-16255.traj.json"
TEXTSTATS = SAMPLES / "mini-swe-agent" / "textstats__empty-summary.traj.json"
CHAT = SAMPLES / "chat-messages" / "textstats.jsonl"
# every trajectory file of the samples (report.json is a SWE-bench result, not a trajectory)
ALL_FILES = sorted(
    p
    for p in [*SHARED.rglob("*"), *SAMPLES.rglob("*")]
    if p.suffix in (".json", ".jsonl", ".traj") and p.name != "report.json"
)


@cache
def steps_of(path: Path) -> tuple[StepRecord, ...]:
    """Every step (eligible or not) of every trajectory in `path`."""
    source = Source(path)
    adapter = detect(source)
    rules = EligibilityRules(min_tokens=0)
    return tuple(s for record in adapter.load(source) for s in build_steps(record, adapter, rules))


def step_where(path: Path, command_part: str, output_part: str = "") -> StepRecord:
    """The first step of `path` whose command contains `command_part` and whose observation
    contains `output_part`."""
    for step in steps_of(path):
        action = step.action
        said = (
            " ".join(filter(None, (action.command, action.arguments, action.raw))) if action else ""
        )
        if command_part in said and output_part in step.observation:
            return step
    raise LookupError(f"{path.name}: no step with {command_part!r} / {output_part!r}")
