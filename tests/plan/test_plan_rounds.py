"""`plan` of a deployed round counts only the steps the deployed compressor changed."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from builder.config import load_config
from builder.plan.estimate import make_plan
from tests.paths import REPO
from tests.run.nap_server import run_config

DEPLOYED = REPO / "builder" / "deployed_samples"


def test_a_deployed_round_plans_only_the_changed_steps(tmp_path: Path) -> None:
    config = tmp_path / "plan.yaml"
    url = "http://127.0.0.1:9/v1"  # plan sends nothing
    config.write_text(run_config(DEPLOYED, url, tmp_path / "out", replay={"prefix": "deployed"}))
    plan = make_plan(load_config(config))
    offline = make_plan(load_config(config, ["replay.prefix=raw"]))
    # the changed eligible steps, from a throwaway ingest of the same files
    from builder.ingest.parallel import InputSpec, run_ingest

    run_ingest([InputSpec(str(DEPLOYED))], tmp_path / "ingest", workers=1)
    steps = pl.read_parquet(tmp_path / "ingest" / "steps" / "*.parquet").filter("eligible")
    changed = steps.filter(pl.col("observation") != pl.col("deployed_observation")).height
    assert plan.eligible_steps == changed < offline.eligible_steps == steps.height
