"""Add to each near-miss pair what its trajectory's log says about the sandbox at each side.

Run: `python benchmarks/near_miss_environments.py FILE.jsonl ... [--mirrors /work/.mirror]`
(rewrites the files in place; the sources must be fetched, as for `near_miss_mine.py`).

Each pair gets `env_a` and `env_b` (`builder.similarity.environment.Environment.as_dict`): the
digests of the scripts the agent wrote before that turn, the interpreters the
log shows without pytest, and (for the earlier side) the pytest run its own output shows
passing every test (`passed`). The later side plays the candidate: the gate never has a
candidate's output, so the outcome of that turn is not read (`unseen`). The earlier side's
outcome is read, as the gate reads the logged reference's and the agent had read it by the
later turn. Scripts are stored as digests; the one text stored is what a logged grep or sed
range printed (`shown`: at most 120 lines and 4,000 characters a read, the last 8 reads).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_sources import (  # noqa: E402
    REPOS,
    REPOS_ROUND6,
    REPOS_ROUND7,
    REPOS_ROUND9,
    REPOS_ROUND12,
    SHARED,
    RepoSource,
    _git,
)

from builder.ingest.formats import detect  # noqa: E402
from builder.ingest.formats.source import Source  # noqa: E402
from builder.similarity.environment import facts  # noqa: E402
from builder.steps.log_turns import log_turns  # noqa: E402
from schemas.trajectories import TrajectoryRecord  # noqa: E402

_SOURCE = re.compile(r"^(?P<file>[^#]+)#(?P<traj>.+)/m(?P<a>\d+)-m(?P<b>\d+)$")


def local_file(label: str, mirrors: Path, cache: Path) -> Path:
    """The trajectory file of a pair's source label (`owner/name@commit:path` or `shared:p`)."""
    if label.startswith("shared:"):
        return SHARED / label.removeprefix("shared:")
    repo_at, path = label.split(":", 1)
    repo, short = repo_at.split("@")
    source = next(
        (s for s in (*REPOS, *REPOS_ROUND6, *REPOS_ROUND7, *REPOS_ROUND9, *REPOS_ROUND12)
         if s.repo == repo and s.commit.startswith(short)),
        None,
    )  # fmt: skip
    if not isinstance(source, RepoSource):
        raise SystemExit(f"{label}: no pinned source of that repository and commit")
    local = cache / repo.replace("/", "+") / path
    if not local.exists():
        mirror = mirrors / repo.replace("/", "+") / "repo"
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(_git(mirror, "show", f"{source.commit}:{path}"))
    return local


def environments(path: Path, wanted: dict[str, list[dict]]) -> int:
    """Set env_a/env_b on the rows of `wanted` (by trajectory id) from one file; the count."""
    source = Source(path)
    adapter = detect(source)
    done = 0
    for traj in adapter.load(source):
        if not isinstance(traj, TrajectoryRecord):
            continue
        rows = wanted.get(traj.native_id or traj.trajectory_id, [])
        if not rows:
            continue
        indices, turns = log_turns(traj, adapter)
        position = {m: i for i, m in enumerate(indices)}
        for row in rows:
            match = _SOURCE.match(row["source"])
            assert match is not None
            a, b = position[int(match["a"])], position[int(match["b"])]
            envs = facts(turns, unseen=(b,))
            row["env_a"], row["env_b"] = envs[a].as_dict(), envs[b].as_dict()
            done += 1
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--cache", type=Path, default=ROOT / ".bench" / "near_miss_env")
    args = parser.parse_args()
    for file in args.files:
        rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line]
        by_file: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
        for row in rows:
            match = _SOURCE.match(row.get("source", ""))
            if match is None:
                continue
            by_file[match["file"]][match["traj"]].append(row)
        done = sum(
            environments(local_file(label, args.mirrors, args.cache), wanted)
            for label, wanted in sorted(by_file.items())
        )
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
        file.write_text(text, encoding="utf-8")
        print(f"{file}: {done} of {len(rows)} pairs have environments")


if __name__ == "__main__":
    main()
