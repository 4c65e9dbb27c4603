"""Builders and constants shared by the publish tests (a small run output folder, fake secrets)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

TOKEN = "hf_" + "Zt9" * 11  # a fake Hub write token; must reach no file and no log
EMPTY_REGISTRY = {"standardEnvVars": [], "harnesses": {}}
SECRET = "ghp_" + "Q7x" * 12  # a GitHub token that must never reach a published file
MESSAGE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])


def tiny_png() -> bytes:
    """A valid 1x1 PNG, so plots are real image files."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\0\0\0\0"))
        + chunk(b"IEND", b"")
    )


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
            {"trajectory_id": tid, "step_index": 0, "chosen": "short", "rejected": "long " + SECRET}
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
    for name in ("compression_ratio.png", "pass_rate_by_intent.png"):
        (out / "plots" / name).write_bytes(tiny_png())
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
