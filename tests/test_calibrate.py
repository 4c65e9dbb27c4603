"""`nap-builder calibrate` and `nap-builder pairs`: the θ sweep, the recommendation, the export
from a real run's Parquet tables, and the loop back (exported pairs, once labelled, calibrate)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from builder.calibrate import ThresholdRow, calibrate, recommend, sweep
from builder.errors import InputError
from builder.similarity.compare import get_similarity
from builder.similarity.labelled import load_pairs
from tests.run.nap_server import nap_server, replicate_samples, run_config

CLI = [sys.executable, "-m", "builder.cli"]


def _sh(command: str) -> dict:
    return {"tool": "bash", "command": command}


def _write(path: Path, rows: list[tuple[str, str, bool]]) -> Path:
    lines = [
        json.dumps({"a": _sh(a), "b": _sh(b), "same": same, "reason": "r"}) for a, b, same in rows
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_sweep_counts_each_threshold_against_the_labels(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "p.jsonl",
        [
            ("ls -la", "ls -la", True),  # normalized 1
            ("ls -la", "ls  -al", True),  # normalized 1 (flag order, spacing)
            ("python a.py", "python3 a.py", True),  # normalized 0: a missed "same"
            ("cat a.py", "cat b.py", False),  # normalized 0
        ],
    )
    rows = sweep(get_similarity("normalized"), load_pairs(path), [0.5, 1.0])
    assert [(r.tp, r.fp, r.tn, r.fn) for r in rows] == [(2, 0, 1, 1), (2, 0, 1, 1)]
    assert rows[0].precision == 1.0 and rows[0].recall == pytest.approx(2 / 3)
    assert rows[0].agreement == pytest.approx(3 / 4)


def _row(theta: float, tp: int, fp: int, fn: int) -> ThresholdRow:
    tn = 10 - fp
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return ThresholdRow(theta, tp, fp, tn, fn, (tp + tn) / (tp + fp + tn + fn), prec, rec)


def test_recommend_takes_the_most_recall_at_the_precision_floor_and_says_why() -> None:
    rows = [
        _row(0.4, 10, 3, 0),  # precise enough? no (0.77)
        _row(0.5, 9, 0, 1),
        _row(0.6, 9, 0, 1),
        _row(0.7, 9, 0, 1),
        _row(0.8, 6, 0, 4),
    ]
    choice = recommend(rows, 0.98)
    assert choice.threshold == 0.7  # the strictest of the 0.5-0.7 plateau
    assert "0.50 to 0.70" in choice.why and "recall (0.900)" in choice.why
    # a large category that says "same" wrongly at 0.7 rules it out: the plateau ends at 0.6
    picky = recommend(rows, 0.98, lambda theta: theta < 0.65)
    assert picky.threshold == 0.6
    lax = recommend(rows, 0.7)
    assert lax.threshold == 0.4 and "recall (1.000)" in lax.why


def test_recommend_says_when_no_threshold_is_precise_enough() -> None:
    choice = recommend([_row(0.5, 5, 5, 0), _row(0.7, 4, 2, 1)], 0.98)
    assert choice.threshold == 0.7 and "no threshold reaches precision 0.98" in choice.why


def _categorised(path: Path, rows: list[tuple[str, str, bool, str]]) -> Path:
    lines = [
        json.dumps({"a": _sh(a), "b": _sh(b), "same": same, "reason": "r", "category": c})
        for a, b, same, c in rows
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_calibrate_prints_the_table_the_recommendation_and_each_category(tmp_path: Path) -> None:
    path = _categorised(
        tmp_path / "p.jsonl",
        [
            ("ls -la", "ls -al", True, "list"),
            ("sed -n '10,29p' a.py", "sed -n '10,30p' a.py", True, "read"),  # lines overlap 0.95
            ("sed -n '10,20p' a.py", "sed -n '10,25p' a.py", False, "read"),  # overlap 0.69
            ("cat a.py", "cat b.py", False, "read"),
            ("git diff", "git diff --stat", False, "vcs"),
        ],
    )
    text = calibrate(path, "semantic", thresholds=[0.5, 0.7, 0.96], pipeline_theta=0.5)
    lines = text.splitlines()
    assert lines[0].endswith("5 labelled pairs (2 same, 3 different), similarity semantic")
    # θ=0.5 lets the 0.69 overlap through; 0.7 keeps both "same"; 0.96 loses the 0.95 one
    assert lines[2].split() == ["0.50", "0.800", "0.667", "1.000", "2", "1", "2", "0"]
    assert lines[3].split()[:8] == ["0.70", "1.000", "1.000", "1.000", "2", "0", "3", "0"]
    assert lines[4].split()[:8] == ["0.96", "0.800", "1.000", "0.500", "1", "0", "3", "1"]
    assert [line.endswith("<- recommended") for line in lines[2:5]] == [False, True, False]
    assert "recommended θ = 0.70" in text
    per_category = text.split("at the recommended θ = 0.70", 1)[1].splitlines()
    read = next(line.split() for line in per_category if line.startswith("read"))
    assert read[:7] == ["read", "3", "1", "1.000", "1.000", "0", "0"]
    assert read[7:9] == ["0.21-1.00", "0.21-1.00"]  # 1 of 1: the 95% Wilson interval
    assert "(fewer than 15)" in text
    at_pipeline = text.split("at the pipeline's θ = 0.50", 1)[1]
    assert at_pipeline.startswith(" (the default gate.threshold): precision 0.667, recall 1.000")


def test_calibrate_cli_reports_the_pipelines_theta(tmp_path: Path) -> None:
    path = _categorised(tmp_path / "p.jsonl", [("ls -la", "ls -al", True, "list")])
    config = Path(__file__).resolve().parents[1] / "pipelines" / "demo.yaml"
    done = subprocess.run(
        [*CLI, "calibrate", str(path), "--config", str(config)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert f"at the pipeline's θ = 0.75 ({config})" in done.stdout


def test_calibrate_pools_several_files(tmp_path: Path) -> None:
    """A benchmark labelled in rounds keeps a file per round; the CLI pools them."""
    one = _categorised(tmp_path / "r1.jsonl", [("ls -la", "ls -al", True, "list")])
    two = _categorised(
        tmp_path / "r2.jsonl",
        [("cat a.py", "cat b.py", False, "read"), ("git diff", "git diff --stat", False, "vcs")],
    )
    done = subprocess.run([*CLI, "calibrate", str(one), str(two)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first == f"{one} + {two}: 3 labelled pairs (1 same, 2 different), similarity semantic"
    alone = subprocess.run([*CLI, "calibrate", str(two)], capture_output=True, text=True)
    assert "2 labelled pairs (0 same, 2 different)" in alone.stdout.splitlines()[0]


def test_a_bad_row_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"a": _sh("ls"), "b": _sh("ls"), "same": True, "reason": "x"})
        + "\n"
        + json.dumps({"a": _sh("ls"), "b": _sh("ls -R"), "same": None, "reason": ""})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"p\.jsonl:2: not a labelled pair .*'same'"):
        load_pairs(path)
    done = subprocess.run([*CLI, "calibrate", str(path)], capture_output=True, text=True)
    assert done.returncode == 2 and "p.jsonl:2" in done.stderr


def test_pairs_exports_judged_actions_with_their_references_from_a_real_run(
    tmp_path: Path,
) -> None:
    corpus = replicate_samples(tmp_path / "corpus", 1)
    out = tmp_path / "out"
    config = tmp_path / "run.yaml"
    with nap_server() as server:
        config.write_text(run_config(corpus, server.base_url, out), encoding="utf-8")
        run = subprocess.run([*CLI, "run", str(config)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    judgements = pq.read_table(out / "judgements").to_pylist()
    references = pq.read_table(out / "references").to_pylist()
    # every (judged action, reference) comparison of the run, read straight from Parquet
    expected = set()
    for j in judgements:
        step = (j["trajectory_id"], j["step_index"])
        refs = sorted(
            (
                r
                for r in references
                if (r["trajectory_id"], r["step_index"]) == step and r["action"]
            ),
            key=lambda r: r["reference_index"],
        )
        for ref, score in zip(refs, j["similarities"] or [], strict=False):
            if j["action"]:
                expected.add((ref["action"]["command"], j["action"]["command"], round(score, 4)))
    assert len(expected) >= 3

    target = tmp_path / "to_label.jsonl"
    done = subprocess.run(
        [*CLI, "pairs", str(out), "--sample", "3", "--output", str(target)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3
    for row in rows:
        assert row["same"] is None and row["similarity_name"] == "semantic"
        assert (row["a"]["command"], row["b"]["command"], row["similarity"]) in expected

    # a person labels them; the file then calibrates like any other
    for row in rows:
        row["same"], row["reason"] = row["a"] == row["b"], "labelled in the test"
    target.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert "recommended θ =" in calibrate(target)


def test_pairs_on_a_directory_without_judgements_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLI, "pairs", str(tmp_path), "--sample", "3"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "no judgements" in done.stderr


def test_pairs_carrying_their_sandbox_are_compared_in_it(tmp_path: Path) -> None:
    """`env_a`/`env_b` (benchmarks/near_miss_environments.py): two script names with the same
    code digest are one program; `--no-environment` compares the pair alone."""
    same_code = {"scripts": {"check.py": "d1", "check_2.py": "d1"}, "missing": []}
    edited = {"scripts": {"check.py": "d1", "check_2.py": "d2"}, "missing": []}
    rows = [
        {"a": _sh("python check.py"), "b": _sh("python check_2.py"), "same": True,
         "reason": "a copy", "env_a": same_code, "env_b": same_code},
        {"a": _sh("python check.py"), "b": _sh("python check_2.py"), "same": False,
         "reason": "check_2.py edited since", "env_a": same_code, "env_b": edited},
    ]  # fmt: skip
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pairs = load_pairs(path)
    assert pairs[0].env_a is not None and pairs[1].env_b is not None
    assert pairs[1].env_b.scripts["check_2.py"] == "d2"
    said = calibrate(path, pipeline_theta=0.75)
    assert "precision 1.000, recall 1.000 (0 false 'same', 0 missed)" in said
    alone = subprocess.run(
        [*CLI, "calibrate", str(path), "--no-environment"], capture_output=True, text=True
    )
    assert alone.returncode == 0, alone.stderr
    assert "recall 0.000 (0 false 'same', 1 missed)" in alone.stdout
    path.write_text(json.dumps({**rows[0], "env_a": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"p\.jsonl:1: not a labelled pair"):
        load_pairs(path)
