"""Mine near-miss action pairs from real public trajectories (step 1 of the near-miss benchmark).

Run: `python benchmarks/near_miss_mine.py [--mirrors /work/.mirror] [--out .bench/near_miss]`.

A near miss is two actions of one trajectory, at most `--window` turns apart, whose texts are
close (difflib ratio >= `--min-ratio`, 0.8) but not equal after whitespace collapse: the same
agent, in nearly the same context, doing nearly the same thing. Every pair is kept verbatim
(whole turns: a turn of several shell calls is joined with ` && `, as the gate's candidate
action is). Pairs are sorted into categories by the *first* side's command (`category_of`,
a rough rule of this script, independent of the similarity), deduplicated, and sampled per
category and per trajectory by a hash, so a rerun draws the same pairs.

The split is fixed here, before any labelling or tuning: `split_of` (a hash of the unordered
pair) puts about half of them in `holdout`. Writes `pool.jsonl` (every near miss found) and
`sample.jsonl` (the pairs to label).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from near_miss_sources import materialise  # noqa: E402

from builder.calibrate import action_spec  # noqa: E402
from builder.errors import UnknownFormatError  # noqa: E402
from builder.ingest.formats import detect  # noqa: E402
from builder.ingest.formats.source import Source  # noqa: E402
from builder.similarity.bashparse import parse_script  # noqa: E402
from builder.similarity.labelled import split_of  # noqa: E402
from schemas.trajectories import TrajectoryRecord  # noqa: E402

Spec = dict
_WS = re.compile(r"\s+")
SUBMIT = re.compile(r"COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT|^submit\b")
SETUP = frozenset({"cd", "export", "source", "set", "pushd", "popd", "true", "sleep", "clear"})


def turns(traj: TrajectoryRecord, adapter) -> Iterator[tuple[int, Spec]]:
    """(message index, the turn's action spec) of every acting assistant turn."""
    for index, message in enumerate(traj.messages):
        if message.role != "assistant" or message.is_demo:
            continue
        actions = adapter.parse_action(message)
        if not actions:
            continue
        if len(actions) == 1:
            yield index, action_spec(actions[0])
        elif all(a.command is not None for a in actions):
            command = " && ".join(a.command or "" for a in actions)
            yield index, {"tool": actions[0].tool, "command": command}
        else:
            calls = [action_spec(a) for a in actions]
            yield index, {"tool": "tool_calls", "arguments": {"calls": calls}}


def text_of(spec: Spec) -> str:
    if "command" in spec:
        return spec["command"]
    return spec["tool"] + " " + json.dumps(spec.get("arguments", {}), sort_keys=True)


def _programs(command: str) -> list[str]:
    """Program of each pipeline's first command (tree-sitter parse), setup commands dropped."""
    out = []
    for pipe in parse_script(command).pipelines:
        name = pipe.commands[0].name.rsplit("/", 1)[-1]
        args = pipe.commands[0].args
        if name in ("timeout", "sudo", "env") and args:
            rest = [a for a in args if not a[0].isdigit() and "=" not in a]
            name = rest[0].rsplit("/", 1)[-1] if rest else name
        if name and name not in SETUP and not (name == "echo" and not pipe.commands[0].redirects):
            out.append(name)
    return out


def category_of(spec: Spec) -> str:
    """A rough kind of action, for per-category figures (not used by any label)."""
    if spec["tool"] in ("submit", "finish", "Finish"):
        return "submit"
    if "command" not in spec:
        return "editor"
    command = spec["command"]
    if SUBMIT.search(command):
        return "submit"
    if spec["tool"] == "str_replace_editor" or command.startswith("str_replace_editor"):
        return "editor"
    progs = _programs(command)
    if len(progs) > 1:
        return "chain"
    first = progs[0] if progs else ""
    if re.search(r"\bpython[0-9.]*\s+(-\S+\s+)*-c\b", command):
        return "python_c"
    if re.search(r"(^|\s)sed\s+(-\w+\s+)*-i|>\s*[\w./-]+\s*<<|<<-?\s*'?\w+'?\s*>", command) or (
        first in ("edit", "create", "patch", "mv", "cp", "rm", "mkdir", "touch", "tee")
    ):
        return "edit"
    if first in ("pytest", "py.test", "tox") or re.search(
        r"-m\s+(pytest|unittest)\b|runtests\.py|bin/test\b", command
    ):
        return "test"
    if first in ("cat", "nl", "head", "tail", "sed", "awk", "open", "goto", "less", "more"):
        return "read"
    if first in ("grep", "rg", "egrep", "search_dir", "search_file", "find_file") or (
        first == "find" and re.search(r"-i?name|-i?path", command)
    ):
        return "search"
    if first in ("ls", "find", "tree", "du"):
        return "list"
    if first == "git":
        return "search" if re.search(r"\bgit\s+grep\b", command) else "vcs"
    if first.startswith("python") or first.endswith((".py", ".sh")):
        return "run"
    return "other"


def collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def near_misses(
    specs: list[tuple[int, Spec]], window: int, min_ratio: float, max_chars: int
) -> Iterator[tuple[int, int, Spec, Spec, float]]:
    for i, (mi, a) in enumerate(specs):
        ta = text_of(a)
        for mj, b in specs[i + 1 : i + 1 + window]:
            tb = text_of(b)
            if collapse(ta) == collapse(tb) or max(len(ta), len(tb)) > max_chars:
                continue
            matcher = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
            if matcher.real_quick_ratio() < min_ratio or matcher.quick_ratio() < min_ratio:
                continue
            ratio = matcher.ratio()
            if ratio >= min_ratio:
                yield mi, mj, a, b, ratio


def pair_key(a: Spec, b: Spec) -> str:
    sides = sorted(json.dumps(x, sort_keys=True) for x in (a, b))
    return hashlib.sha256("\n".join(sides).encode()).hexdigest()


def mine(
    mirrors: Path, cache: Path, window: int, min_ratio: float, max_chars: int, **sources
) -> list[dict]:
    """Every near miss of the sources (`materialise`'s, or those passed as `repos`/`shared`)."""
    rows: list[dict] = []
    seen: set[str] = set()
    for label, path in materialise(mirrors, cache, **sources):
        source = Source(path)
        try:
            adapter = detect(source)
        except UnknownFormatError as exc:
            print(f"skipped: {exc}".split(";")[0], file=sys.stderr)
            continue
        for traj in adapter.load(source):
            if not isinstance(traj, TrajectoryRecord):
                continue
            specs = list(turns(traj, adapter))
            for mi, mj, a, b, ratio in near_misses(specs, window, min_ratio, max_chars):
                key = pair_key(a, b)
                if key in seen:
                    continue
                seen.add(key)
                cat_a, cat_b = category_of(a), category_of(b)
                rows.append(
                    {
                        "a": a,
                        "b": b,
                        "category": cat_a if cat_a == cat_b else "mixed",
                        "source": f"{label}#{traj.native_id or traj.trajectory_id}/m{mi}-m{mj}",
                        "ratio": round(ratio, 3),
                        "split": split_of(a, b),
                        "key": key[:16],
                    }
                )
    return rows


_WORD = re.compile(r"\w+")
# pairs to label per category (all of a smaller category)
QUOTAS = {
    "read": 70,
    "search": 70,
    "list": 40,
    "edit": 70,
    "chain": 60,
    "python_c": 60,
    "test": 60,
    "run": 50,
    "editor": 45,
    "mixed": 40,
    "other": 30,
    "vcs": 10,
    "submit": 10,
}
# round 2 (after the held-out figures of round 1 had 0-7 "same" pairs a category): more of
# the categories whose per-category figures rested on a handful of pairs
QUOTAS_ROUND2 = {
    "read": 60,
    "search": 60,
    "python_c": 50,
    "other": 40,
    "test": 30,
    "list": 25,
    "mixed": 25,
    "run": 25,
}


def closeness(a: Spec, b: Spec) -> int:
    """How the two texts differ, coarsely: 0 only in punctuation, quoting, spacing or order
    (the same words), 1 only in numbers or one word, 2 more. Used to spread the sample over
    kinds of near misses, so the closest ones (the hardest) are not crowded out."""
    wa, wb = Counter(_WORD.findall(text_of(a))), Counter(_WORD.findall(text_of(b)))
    if set(wa) == set(wb):
        return 0
    diff = (wa - wb) + (wb - wa)
    if all(w.isdigit() for w in diff) or sum(diff.values()) <= 2:
        return 1
    return 2


def sample(
    rows: list[dict], per_trajectory: int, quotas: dict[str, int] = QUOTAS, closest_too: bool = True
) -> list[dict]:
    """Per category up to its quota, a third from each closeness kind where it has enough,
    at most `per_trajectory` pairs of a category from one trajectory (more when the
    category has too few trajectories to fill its quota), in hash order
    (deterministic, and unrelated to any score)."""
    out = []
    by_cat: dict[str, list[dict]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: r["key"]):
        by_cat[row["category"]].append(row)
    for cat, rows_of in by_cat.items():
        quota = quotas.get(cat, 0 if quotas is not QUOTAS else 20)
        if not quota:
            continue
        trajectories = {row["source"].rsplit("/m", 1)[0] for row in rows_of}
        cap = max(per_trajectory, -(-quota // len(trajectories)))  # few runs: more from each
        taken: Counter[str] = Counter()
        picked: list[dict] = []
        for kind in (0, 1, 2):
            share = quota * (kind + 1) // 3 - len(picked)  # what a kind leaves, the next gets
            for row in rows_of:
                if share <= 0:
                    break
                traj = row["source"].rsplit("/m", 1)[0]
                if row in picked or closeness(row["a"], row["b"]) != kind:
                    continue
                if taken[traj] >= cap:
                    continue
                taken[traj] += 1
                picked.append(row)
                share -= 1
        out.extend(picked)
    if closest_too:
        out.extend(closest(rows, out, per_trajectory))
    return sorted(out, key=lambda r: (r["category"], r["key"]))


def closest(rows: list[dict], picked: list[dict], per_trajectory: int) -> list[dict]:
    """Every other pair whose sides differ only in punctuation, quoting, spacing or order
    (closeness 0), at most `per_trajectory` a trajectory: the hardest near misses, and most
    of the real "same" ones, which the category quotas alone would sample too thinly."""
    keys = {row["key"] for row in picked}
    taken: Counter[str] = Counter()
    out = []
    for row in sorted(rows, key=lambda r: r["key"]):
        traj = row["source"].rsplit("/m", 1)[0]
        if row["key"] in keys or closeness(row["a"], row["b"]) != 0:
            continue
        if taken[traj] < per_trajectory:
            taken[traj] += 1
            out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=ROOT / ".bench" / "near_miss")
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--min-ratio", type=float, default=0.8)
    parser.add_argument("--max-chars", type=int, default=6000)
    parser.add_argument("--per-trajectory", type=int, default=2)
    parser.add_argument(
        "--exclude",
        type=Path,
        help="a labelled pairs file: its pairs are left out of the sample (round 2 and later)",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = mine(args.mirrors, args.out / "sources", args.window, args.min_ratio, args.max_chars)
    if args.exclude:
        done = {json.loads(line)["key"] for line in args.exclude.open(encoding="utf-8")}
        fresh = [row for row in rows if row["key"] not in done]
        picked = sample(fresh, args.per_trajectory, QUOTAS_ROUND2, closest_too=False)
    else:
        picked = sample(rows, args.per_trajectory)
    for name, data in (("pool.jsonl", rows), ("sample.jsonl", picked)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data)
        (args.out / name).write_text(text, encoding="utf-8")
    print(f"{len(rows)} near misses, {len(picked)} sampled")
    pool = Counter(r["category"] for r in rows)
    chosen = Counter(r["category"] for r in picked)
    for cat in sorted(pool):
        print(f"{cat:<10}{pool[cat]:>7}{chosen[cat]:>6}")


if __name__ == "__main__":
    main()
