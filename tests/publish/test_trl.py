"""The published `sft` and `preferences` configs, read by TRL's own data utilities.

TRL's `is_conversational` picks the column it inspects with `set.pop()`, so its verdict on a
row can depend on PYTHONHASHSEED; each check runs in a subprocess under several seeds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.publish.layout import build_dataset_folder
from tests.paths import REPO
from tests.publish.publish_fixtures import make_real_run_output

pytest.importorskip("trl.data_utils", reason="trl (pip install --no-deps trl) is a dev dependency")
# With these seeds set.pop() on {"prompt", "messages"} returns both keys (checked below).
SEEDS = ("0", "1", "2", "4")


def _check(dataset: Path, cache: Path, seed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": seed, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "tests.publish.trl_check", str(dataset), str(cache)],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_trl_reads_both_configs_as_conversational_under_every_hash_seed(tmp_path: Path) -> None:
    out = make_real_run_output(tmp_path)
    dataset = tmp_path / "ds"
    build_dataset_folder(out, dataset, splits={"train": 1.0})
    results = [_check(dataset, tmp_path / f"cache-{seed}", seed) for seed in SEEDS]
    first = results[0]
    assert not first["torch_loaded"]  # trl.data_utils works without torch
    for result in results:
        for config in ("sft", "preferences"):
            assert result[config]["conversational"] == [True] * len(first[config]["rows"])
            assert result[config]["applied"] == first[config]["applied"]  # same under every seed
    # the old shape (plain `prompt` beside `messages`) flips with the seed: the check is sharp
    assert {r["old_shape_conversational"] for r in results} == {True, False}

    sft_rows, sft_text = first["sft"]["rows"], first["sft"]["applied"]
    assert len(sft_rows) == 6
    for row, applied in zip(sft_rows, sft_text, strict=True):
        assert set(applied) == {"text"}  # language modelling: messages -> text
        assert applied["text"] == (
            f"<|system|>\n{row['system_prompt']}<|end|>\n<|user|>\n{row['user_prompt']}<|end|>\n"
            f"<|assistant|>\n{row['target']}<|end|>\n"
        )
    pref_rows, pref_text = first["preferences"]["rows"], first["preferences"]["applied"]
    assert len(pref_rows) == 6
    for row, applied in zip(pref_rows, pref_text, strict=True):
        assert set(applied) == {"prompt", "chosen", "rejected"}
        # the compressor's instructions travel with every pair
        assert applied["prompt"] == (
            f"<|system|>\n{row['system_prompt']}<|end|>\n<|user|>\n{row['user_prompt']}<|end|>\n"
            "<|assistant|>\n"
        )
        assert applied["chosen"] == f"{row['chosen_target']}<|end|>\n"
        assert applied["rejected"] == f"{row['rejected_target']}<|end|>\n"
        assert row["chosen_target"] != row["rejected_target"]
