"""Instance ids read straight from the real trajectory files with `json`, where FORMATS.md says
each format keeps them, without the adapters: the truth the decontamination tests compare with.

mini-swe-agent: `instance_id` (a bare message list has none: its batch runner's file name);
SWE-agent: `replay_config.problem_statement.id` (0.x has none: the `.traj` file name);
SWE-smith messages: `instance_id` per line; OpenHands evaluation output: `instance_id`, the
resolver's `issue` as owner/repo#number; the session formats record no instance.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.paths import SHARED

# (file relative to SHARED, record index) -> instance id or None, for every trajectory file
RawIds = dict[tuple[str, int], str | None]


def raw_instance_ids(root: Path = SHARED) -> RawIds:
    found: RawIds = {}
    for path in sorted((root / "mini-swe-agent").rglob("*.traj.json")):
        doc = json.loads(path.read_text())
        own = doc.get("instance_id") if isinstance(doc, dict) else None
        found[(_rel(path, root), 0)] = own or path.name.removesuffix(".traj.json")
    for path in sorted((root / "swe-agent").glob("*.traj")):
        doc = json.loads(path.read_text())
        replay = doc.get("replay_config") or {}
        replay = json.loads(replay) if isinstance(replay, str) else replay
        own = (replay.get("problem_statement") or {}).get("id")
        found[(_rel(path, root), 0)] = own or path.name.removesuffix(".traj")
    for path in sorted((root / "swe-smith-messages").glob("*.jsonl")):
        for index, line in enumerate(path.read_text().splitlines()):
            found[(_rel(path, root), index)] = json.loads(line)["instance_id"]
    resolver = root / "openhands-v0" / "resolver" / "output.jsonl"
    for index, line in enumerate(resolver.read_text().splitlines()):
        row = json.loads(line)
        issue = row.get("issue") or {}
        own = row.get("instance_id") or f"{issue['owner']}/{issue['repo']}#{issue['number']}"
        found[(_rel(resolver, root), index)] = own
    found[("openhands-v0/basic.json", 0)] = None  # a bare event list: no instance
    for name in (
        "openhands-v1-sdk/events.jsonl",
        "claude-code/hello-world-script/transcript.jsonl",
        "atif-variant/trajectory.json",
    ):
        found[(name, 0)] = None
    for path in (root / "openhands-llm-log").glob("*.json"):
        found[(_rel(path, root), 0)] = None
    return found


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()
