"""Make the deployed-run samples (`builder/deployed_samples/`) from the project's own samples:
each observation is run through a `rule:` compressor as a deployed harness would, the message
shows the agent the rule's rendered output, and the raw tool output is logged beside it by the
convention of the harness (`builder.ingest.formats.deployed_output`).

`python -m tests.ingest.deployed_sample --write` rewrites them; the tests check that the shipped
files are what this makes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from builder.ingest.formats import get_adapter
from builder.ingest.formats.source import Source
from builder.steps.pairing import EligibilityRules, build_steps
from builder.teacher.candidates import rule_candidates
from builder.teacher.prompt import PROMPT_VERSION
from tests.paths import REPO, SAMPLES

DEPLOYED = REPO / "builder" / "deployed_samples"
RULE = "head_tail"  # changes some observations of each sample and leaves the others as they ran
MINI = ("mini-swe-agent", "mini-swe-agent/textstats__empty-summary.traj.json")
CHAT = ("chat-messages", "chat-messages/textstats.jsonl")


def shown_payloads(fmt: str, path: Path) -> dict[tuple[int, int], tuple[str, str]]:
    """(record, message index) -> (payload the compressor was given, payload the agent saw),
    for every observation of the file: the deployed harness compressed each one."""
    adapter = get_adapter(fmt)
    shown = {}
    for record, traj in enumerate(adapter.load(Source(path))):
        for step in build_steps(traj, adapter, EligibilityRules(min_tokens=0)):  # type: ignore[arg-type]
            [row] = rule_candidates(step, [RULE], prompt_version=PROMPT_VERSION)
            seen = row.rendered if row.valid and row.rendered is not None else step.observation
            shown[(record, step.observation_message_index)] = (step.observation, seen)
    return shown


def deployed_message(message: dict[str, Any], raw: str, seen: str, fmt: str) -> dict[str, Any]:
    """The message as the deployed run logs it: what the agent saw, and the raw output."""
    out = dict(message)
    start = message["content"].index(raw) if raw else len(message["content"])
    out["content"] = message["content"][:start] + seen + message["content"][start + len(raw) :]
    if fmt == "mini-swe-agent":
        out["extra"] = {**message.get("extra", {}), "raw_output": raw}
    else:
        out["raw_output"] = raw
    return out


def deployed_file(fmt: str, name: str) -> str:
    """The deployed form of one sample file, as text."""
    source = SAMPLES / name
    shown = shown_payloads(fmt, source)
    text = source.read_text(encoding="utf-8")
    records = (
        [json.loads(line) for line in text.splitlines()]
        if name.endswith(".jsonl")
        else [json.loads(text)]
    )
    for record, doc in enumerate(records):
        doc["messages"] = [
            deployed_message(m, *shown[(record, i)], fmt) if (record, i) in shown else m
            for i, m in enumerate(doc["messages"])
        ]
    if name.endswith(".jsonl"):
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return json.dumps(records[0], indent=2, ensure_ascii=False) + "\n"


def made() -> dict[Path, str]:
    return {DEPLOYED / name: deployed_file(fmt, name) for fmt, name in (MINI, CHAT)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite the shipped samples")
    args = parser.parse_args()
    for path, text in made().items():
        if args.write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        print(f"{path.relative_to(REPO)}: {len(text):,} characters")


if __name__ == "__main__":
    main()
