"""Where the near-miss benchmark's trajectories come from: public runs, pinned by commit.

Each source is a public GitHub repository at a fixed commit (read from a local git mirror, as
`fetch` brings them: `<mirrors>/<owner>+<name>/repo`) or the project's shared samples
(`../shared/trajectories`, whose own SOURCES.md names their origin). Every one is MIT licensed;
the benchmark keeps only command strings and tool arguments from them, with the file each came
from (tests/similarity/near_misses/SOURCES.md).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = next(
    (p / "shared" / "trajectories" for p in ROOT.parents if (p / "shared").is_dir()),
    ROOT.parent / "shared" / "trajectories",
)


@dataclass(frozen=True)
class RepoSource:
    """Trajectory files of one repository at one commit, chosen by a glob on their path."""

    repo: str  # owner/name on GitHub
    commit: str
    pattern: str  # fnmatch over the path in the repository
    harness: str
    licence: str = "MIT"
    last_only_in: str | None = None  # keep only the last file of each folder (LLM-log prefixes)


REPOS = (
    RepoSource(
        "gruckion/mini-swe-agent",
        "d12a71affd95403b036b2bdbd827349b77bfffb9",
        "swebench_results/20251118_gemini-3-pro-74pct/trajs/*/*.traj.json",
        "mini-swe-agent (Gemini 3 Pro, SWE-bench Verified, 500 runs)",
    ),
    RepoSource(
        "SWE-agent/SWE-agent",
        "3ea751c087f32b16e039a2233dd6eefecef325d5",
        "*.traj",
        "SWE-agent (GPT-4 runs and demonstrations, CTF demonstrations)",
    ),
    RepoSource(
        "DRMacIver/claude-reliability",
        "4e49f16a86de76d9b0dc3ea2b8526677abe89f52",
        "snapshot-tests/tests/*/transcript.jsonl",
        "Claude Code (session transcripts)",
        "MIT (declared in Cargo.toml and README)",
    ),
    RepoSource(
        "OpenHands/software-agent-sdk",
        "611629e6999ad398dc49c761721eefe18d5e6bd9",
        "tests/fixtures/llm_data/*llm-logs/*.json",
        "OpenHands (LLM completion logs)",
        last_only_in="folder",
    ),
    RepoSource(
        "OpenHands/software-agent-sdk",
        "611629e6999ad398dc49c761721eefe18d5e6bd9",
        "tests/sdk/conversation/goal/fixtures/events.jsonl",
        "OpenHands SDK (events)",
    ),
)
# round 6: a source found after rounds 1-5 were drawn, kept apart so their draws do not change.
# OpenHands' CodeAct agent on three Multi-SWE-bench tasks (ponylang/ponyc, C): the first
# near misses of another harness and another language than the mini-swe-agent Python runs.
# MIT outside enterprise/ (the repository's LICENSE).
REPOS_ROUND6 = (
    RepoSource(
        "All-Hands-AI/OpenHands",
        "156d0686c46aafb0fa9d291da6421fb6f64dddc0",
        "evaluation/benchmarks/multi_swe_bench/examples/output.jsonl",
        "OpenHands CodeAct (Multi-SWE-bench, ponylang/ponyc, 3 runs)",
    ),
)
# round 7: SWE-agent 1.x (XML function calls: bash, str_replace_editor, submit) with two other
# models on SWE-bench Verified, the runs the SWE-bench team published (SWE-bench/experiments,
# `verified/20250511_sweagent_lm_32b` and `verified/20250522_sweagent_claude-4-sonnet-20250514`),
# as copied into a public analysis repository. No licence is stated there, so nothing of it is
# committed: round 7's pairs are rebuilt from the mirror, only keys and labels are kept.
# A snapshot lacks files of 4 MiB and more: 332 and 64 of the 500 runs of each can be read.
ROUND7_COMMIT = "9ecabb67ca553a1c86a7e504c4556772b9443e99"
REPOS_ROUND7 = tuple(
    RepoSource(
        "lgetter/swe-agent-trajectory-analysis",
        ROUND7_COMMIT,
        f"{folder}/trajs/*/*.traj",
        f"SWE-agent 1.x ({model}, SWE-bench Verified)",
        "none stated (SWE-bench/experiments runs): not committed",
    )
    for folder, model in (
        ("20250511_sweagent_lm_32b", "SWE-agent-LM-32B"),
        ("20250522_sweagent_claude-4-sonnet-20250514", "Claude 4 Sonnet"),
    )
)
# round 9: mini-swe-agent with the Live-SWE-agent configuration, GPT-5-mini on SWE-bench
# Verified (45 runs of an ablation, 3 of a first try), as a course project published them.
# Found after round 8 was evaluated, to measure the sandbox gate of stop 40 on pairs never seen.
# The repository states no licence (its vendored live-swe-agent/ code is MIT, the runs are not
# covered by it), so, as for round 7, nothing of it is committed but keys and labels.
REPOS_ROUND9 = (
    RepoSource(
        "RussellRyanH/CSCI-635-LiveSWE-Agent",
        "2813cfb19465bb9f57d50ebd0798550480a2f836",
        "results/llm-ablation/gpt-5-mini/*/*.traj.json",
        "mini-swe-agent, Live-SWE-agent config (GPT-5-mini, SWE-bench Verified, 45 runs)",
        "none stated: not committed",
    ),
    RepoSource(
        "RussellRyanH/CSCI-635-LiveSWE-Agent",
        "f21abd8b4d3ec1cb3f90707603fd9062da4d8116",
        "results/live-gpt-5-mini-verified/*/*.traj.json",
        "mini-swe-agent, Live-SWE-agent config (GPT-5-mini, SWE-bench Verified, 3 runs)",
        "none stated: not committed",
    ),
)
# round 12: SWE-agent 0.x (2024: `open`, `goto`, `edit`, `search_file` commands in a bash
# block) with five models on Multi-SWE-bench's Java tasks, as the Multi-SWE-bench team
# published them. Found after stop 44, to look at the gate as it ships on models, a harness
# version and a language no rule was written from. No licence is stated: not committed.
ROUND12_COMMIT = "89888f1604001fcd80b0799a37af42a1bfebfd8f"
REPOS_ROUND12 = tuple(
    RepoSource(
        "multi-swe-bench/experiments",
        ROUND12_COMMIT,
        f"evaluation/java/verified/20240825_SWE-agent_{model}/trajs/*.traj",
        f"SWE-agent 0.x ({model}, Multi-SWE-bench Java)",
        "none stated: not committed",
    )
    for model in (
        "gpt-4o-2024-05-13",
        "gpt-4o-mini-2024-07-18",
        "deepseek-chat-v2",
        "deepseek-coder-v2",
        "doubao-pro-128k",
    )
)
# the shared samples not already covered by a repository above (see their SOURCES.md)
SHARED_FILES = (
    "openhands-v0/basic.json",
    "openhands-v0/resolver/output.jsonl",
    "swe-smith-messages/ft_xml_example.jsonl",
    "atif-variant/trajectory.json",
)


def _git(mirror: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(mirror), *args], check=True, capture_output=True
    ).stdout


def repo_files(source: RepoSource, mirrors: Path) -> list[str]:
    """Paths of the source's trajectory files at its commit."""
    mirror = mirrors / source.repo.replace("/", "+") / "repo"
    if not mirror.is_dir():
        raise SystemExit(f"{mirror}: missing; fetch github:{source.repo} first")
    listing = _git(mirror, "ls-tree", "-r", "-l", source.commit).decode().splitlines()
    entries = [line.split("\t", 1) for line in listing]
    paths = sorted(path for meta, path in entries if fnmatch(path, source.pattern))
    absent = {path for meta, path in entries if meta.split()[3] in ("-", "BAD")}
    if absent & set(paths):  # a snapshot lacks large files: read what it has, and say so
        print(f"{source.repo}: {len(absent & set(paths))} files absent from the snapshot, skipped")
        paths = [p for p in paths if p not in absent]
    if source.last_only_in:
        last: dict[str, str] = {}
        for p in paths:
            last[p.rsplit("/", 1)[0]] = p
        paths = sorted(last.values())
    return paths


def materialise(
    mirrors: Path,
    cache: Path,
    repos: tuple[RepoSource, ...] = REPOS,
    shared: tuple[str, ...] = SHARED_FILES,
) -> Iterator[tuple[str, Path]]:
    """(source label `owner/name@commit:path` or `shared:path`, local file) of every file."""
    for source in repos:
        mirror = mirrors / source.repo.replace("/", "+") / "repo"
        for path in repo_files(source, mirrors):
            local = cache / source.repo.replace("/", "+") / path
            if not local.exists():
                local.parent.mkdir(parents=True, exist_ok=True)
                local.write_bytes(_git(mirror, "show", f"{source.commit}:{path}"))
            yield f"{source.repo}@{source.commit[:12]}:{path}", local
    for name in shared:
        yield f"shared:{name}", SHARED / name


# where `near_miss_mine.py` cached the trajectory files it read (one folder per run of it)
CACHES = tuple(
    ROOT / ".bench" / name / "sources"
    for name in (
        "near_miss",
        "near_miss_r2",
        "near_miss_r6",
        "near_miss_r7",
        "near_miss_r9",
        "near_miss_r10",
        "near_miss_r12",
    )
)


@lru_cache(maxsize=2)  # the callers walk pairs sorted by source: one file at a time
def _messages(path: Path) -> list:
    return json.loads(path.read_text(encoding="utf-8"))["messages"]


def cached_file(source: str) -> tuple[Path, int, int]:
    """The miner's cached copy of a pair's trajectory file and the indices of the two
    actions' messages, from its `source` (`owner/name@commit:path#trajectory/mA-mB`)."""
    label, _, rest = source.partition("#")
    match = re.search(r"/m(\d+)-m(\d+)$", rest)
    if match is None or ":" not in label:
        raise SystemExit(f"{source}: not a repository source with message indices")
    repo, path = label.split(":", 1)
    local = repo.split("@")[0].replace("/", "+") + "/" + path
    for cache in CACHES:
        if (cache / local).exists():
            return cache / local, int(match[1]), int(match[2])
    raise SystemExit(f"{local}: not cached; run near_miss_mine.py first")


def logged_outputs(source: str) -> tuple[object, object]:
    """The contents of the messages logged right after the two actions of a pair's source."""
    path, first, second = cached_file(source)
    messages = _messages(path)
    return messages[first + 1].get("content"), messages[second + 1].get("content")
