"""A generated corpus with the shape of the 500-trajectory real corpus of issue 31: about 40
steps per trajectory (20k steps), a quarter of them with outputs long enough to compress (5k
eligible steps), the rest short (listings, edits, one-line greps), as mini-swe-agent files.

Long outputs are 20-40 numbered source lines (about 320-650 cl100k tokens once the builder
numbers them, over the 256-token threshold); short ones 1-6 lines (under 60 tokens), so the
eligible count does not hang on tokenizer details. Real outputs are often longer: the
requests here are smaller than a real corpus's (their prefixes hold the whole history), so
the run's memory here is a lower bound of what real text would need. The text is plain
words (no hex or key-like strings the scrubber would redact) and every trajectory has its
own task, so none is a duplicate of another. Seeded: the same arguments write the same bytes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "builder/samples/mini-swe-agent/textstats__empty-summary.traj.json"
STEPS = 40  # steps per trajectory: 20k steps over 500 trajectories
LONG = 10  # of them with a long output: 5k eligible steps over 500
_VOCABULARY = (
    "alpha beta gamma delta count total index value item record parse render widget table "
    "column buffer reader writer config option report summary token stream batch cache entry "
    "result status error handler request reply worker queue shard frame"
)
WORDS = _VOCABULARY.split()


def _name(rng: random.Random) -> str:
    return f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"


def _long_step(rng: random.Random) -> tuple[str, str]:
    """A command that reads a source file, and its 20-40 numbered lines."""
    module = _name(rng)
    lines = [
        f"{n:6d}\t    {_name(rng)} = {_name(rng)}({rng.choice(WORDS)}, {rng.randint(0, 99)})"
        for n in range(1, rng.randint(20, 40) + 1)
    ]
    return f"nl -ba src/pkg/{module}.py", "\n".join(lines)


def _short_step(rng: random.Random) -> tuple[str, str]:
    """A listing, an edit or a narrow grep: 1-6 short lines."""
    kind = rng.randrange(3)
    if kind == 0:
        names = [f"{_name(rng)}.py" for _ in range(rng.randint(1, 6))]
        return "ls src/pkg", "\n".join(names)
    if kind == 1:
        old, new = _name(rng), _name(rng)
        return f"sed -i 's/{old}/{new}/' src/pkg/{_name(rng)}.py", ""
    word = _name(rng)
    hits = [f"src/pkg/{_name(rng)}.py:{rng.randint(1, 300)}: {word}()" for _ in range(3)]
    return f"grep -rn {word} src", "\n".join(hits[: rng.randint(1, 3)])


def trajectory(rng: random.Random, index: int, system: str) -> dict[str, Any]:
    """One mini-swe-agent trajectory: task, STEPS command/output pairs (LONG of them long,
    at random places), then the submit command."""
    task = (
        f"<pr_description>\nIssue {index}: {' '.join(rng.choices(WORDS, k=24))}\n"
        "</pr_description>\n\n<instructions>\nFix the issue in /testbed.\n</instructions>"
    )
    messages: list[dict[str, str]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": task},
    ]
    long_at = set(rng.sample(range(STEPS), LONG))
    for k in range(STEPS):
        command, output = (_long_step if k in long_at else _short_step)(rng)
        thought = f"THOUGHT: step {k}, looking at {rng.choice(WORDS)}.\n\n```bash\n{command}\n```"
        messages.append({"role": "assistant", "content": thought})
        observation = f"<returncode>0</returncode>\n<output>\n{output}\n</output>"
        messages.append({"role": "user", "content": observation})
    submit = "THOUGHT: done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"
    messages.append({"role": "assistant", "content": submit})
    return {
        "info": {"exit_status": "Submitted", "submission": ""},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": f"scale__issue-{index}",
    }


def write_corpus(dest: Path, trajectories: int, seed: int = 31) -> Path:
    """`trajectories` files under `dest` (replaced), seeded; returns `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.traj.json"):
        old.unlink()
    system = json.loads(SAMPLE.read_text())["messages"][0]["content"]
    rng = random.Random(seed)
    for index in range(trajectories):
        doc = trajectory(rng, index, system)
        (dest / f"scale-{index:04d}.traj.json").write_text(json.dumps(doc))
    return dest
