"""Builders and constants shared by the publish tests (a small run output folder, fake secrets)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from builder.report.svg import no_data

TOKEN = "hf_" + "Zt9" * 11  # a fake Hub write token; must reach no file and no log
EMPTY_REGISTRY = {"standardEnvVars": [], "harnesses": {}}
SECRET = "ghp_" + "Q7x" * 12  # a GitHub token that must never reach a published file
MESSAGE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])


def _write_shards(folder: Path, table: pa.Table, shards: int) -> None:
    folder.mkdir(parents=True)
    step = -(-table.num_rows // shards)
    for i in range(shards):
        pq.write_table(table.slice(i * step, step), folder / f"shard-{i:05d}.parquet")
    (folder / "_SUCCESS").write_text("")
    pq.write_table(table.slice(0, 1), folder / ".shard-00099.parquet")  # an unfinished temp file


def make_run_output(root: Path, trajectories: int = 40) -> Path:
    """OUT/ with supervision, preferences and candidates tables over `trajectories` ids."""
    out = root / "out"
    tids = [f"traj-{i:03d}" for i in range(trajectories)]
    sup_rows, pref_rows, cand_rows = [], [], []
    for t, tid in enumerate(tids):
        for step in range(3):
            prompt = (
                f"Task {t}\ncommand: cat settings.py\n1> TOKEN = '{SECRET}'"
                if step == 0
                else f"obs {t}.{step}"
            )
            sup_rows.append(
                {
                    "trajectory_id": tid,
                    "step_index": step,
                    "prompt": prompt,
                    "target": json.dumps({"type": "plain", "content": f"summary {t}.{step}"}),
                    "messages": [
                        {"role": "user", "content": prompt},
                        {"role": "assistant", "content": "ok"},
                    ],
                    "rendered_tokens": 10 + step,
                    "similarity": 0.5 + step / 10,
                    "prompt_version": "compressor-v3",
                }
            )
            for k in range(2):
                cand_rows.append(
                    {
                        "trajectory_id": tid,
                        "step_index": step,
                        "candidate_index": k,
                        "passed": k == 0,
                        "rendered": f"c{k}",
                    }
                )
        pref_rows.append(
            {
                "trajectory_id": tid,
                "step_index": 0,
                "system": "Compress the observation.",
                "prompt": f"Task {t}\nobservation",
                "chosen": "short",
                "rejected": "long " + SECRET,
            }
        )
    sup = pa.Table.from_pylist(
        sup_rows,
        schema=pa.schema(
            [
                pa.field("trajectory_id", pa.string(), nullable=False),
                pa.field("step_index", pa.int64()),
                pa.field("prompt", pa.string()),
                pa.field("target", pa.string()),
                pa.field("messages", pa.list_(MESSAGE)),
                pa.field("rendered_tokens", pa.int64()),
                pa.field("similarity", pa.float64()),
                pa.field("prompt_version", pa.string()),
            ]
        ),
    )
    _write_shards(out / "supervision", sup, 3)
    _write_shards(out / "preferences", pa.Table.from_pylist(pref_rows), 2)
    _write_shards(out / "candidates", pa.Table.from_pylist(cand_rows), 2)
    (out / "plots").mkdir()
    for name in ("compression_ratio", "pass_rate_by_intent"):  # real SVG files, as a run writes
        (out / "plots" / f"{name}.svg").write_text(no_data(name.replace("_", " ")))
    report = {
        "totals": {
            "trajectories": trajectories,
            "eligible_steps": 3 * trajectories,
            "selected": len(sup_rows),
        },
        "compression": {"ratio_mean": 0.42},
    }
    (out / "report.json").write_text(json.dumps(report))
    (out / "config.hash").write_text("abc123def456\n")
    resolved = {"teacher": {"model": "gpt-teacher-x"}, "agent": {"model": "agent-model-y"}}
    (out / "config.resolved.yaml").write_text(yaml.safe_dump(resolved))
    return out


def make_real_run_output(root: Path, trajectories: int = 6) -> Path:
    """OUT/ whose tables have the real schemas and the rows the pipeline writes (select.py)."""
    from builder.select import preference_pairs, select
    from builder.teacher.prompt import build_prompt
    from schemas.candidates import CANDIDATE_SCHEMA, CandidateRecord
    from schemas.common import to_table
    from schemas.judgements import JudgementRecord
    from schemas.preferences import PREFERENCE_SCHEMA
    from schemas.steps import Action, StepRecord
    from schemas.supervision import SUPERVISION_SCHEMA

    out = root / "out"
    sup, pref, cands = [], [], []
    for t in range(trajectories):
        raw = "".join(f"tests/test_{t}.py::test_{i} PASSED\n" for i in range(30))
        step = StepRecord(
            f"traj-{t:03d}", 1, 2, 3, "mini-swe-agent", "mini-swe-agent",
            action=Action("bash", '{"command": "pytest"}', "pytest", "pytest"),
            observation=raw, eligible=True,
        )  # fmt: skip
        system, user = build_prompt(f"Fix issue {t}", None, "pytest", raw)
        outputs = ['{"type": "plain", "content": "30 tests passed"}', '{"type": "unchanged"}']
        step_cands = [
            CandidateRecord(
                trajectory_id=step.trajectory_id,
                step_index=1,
                candidate_index=k,
                source="teacher",
                prompt_version="coact-v1",
                teacher_model="teacher-m",
                reply=o,
                kind="plain" if k == 0 else "unchanged",
                output=o,
                valid=True,
                invalid_reason=None,
                duplicate_of=None,
                rendered="30 passed" if k == 0 else raw,
                raw_chars=len(raw),
                rendered_chars=9 if k == 0 else len(raw),
                raw_tokens=300,
                rendered_tokens=3 if k == 0 else 300,
            )
            for k, o in enumerate(outputs)
        ]
        verdicts = [
            JudgementRecord(
                trajectory_id=step.trajectory_id,
                step_index=1,
                candidate_index=k,
                judge_order=k,
                agent_model="agent-m",
                reply="ls",
                action=Action("bash", "{}", "ls", "ls"),
                similarities=[s],
                aggregate=s,
                passed=s > 0.5,
            )
            for k, s in enumerate((0.9, 0.2) if t % 2 else (0.2, 0.9))
        ]
        prompts = {"system": system, "prompt": user, "prompt_version": "coact-v1"}
        sup += select(step, step_cands, verdicts, agent_model="agent-m", **prompts).rows
        pref += preference_pairs(step, step_cands, verdicts, **prompts)
        cands += step_cands
    for name, rows, schema in (
        ("supervision", sup, SUPERVISION_SCHEMA),
        ("preferences", pref, PREFERENCE_SCHEMA),
        ("candidates", cands, CANDIDATE_SCHEMA),
    ):
        (out / name).mkdir(parents=True)
        pq.write_table(to_table(rows, schema), out / name / "shard-00000.parquet")
    return out
