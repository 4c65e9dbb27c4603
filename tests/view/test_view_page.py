"""The page's data and embedding, without a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

from builder.teacher.output import CompressorOutput, OmittedRange
from builder.teacher.render import render
from builder.view.data import candidate_entry
from builder.view.write import embedded_json, render_page


def _row(**kw: object) -> dict:
    base = {
        "candidate_index": 0, "source": "teacher", "kind": None, "valid": True,
        "invalid_reason": None, "duplicate_of": None, "rendered_tokens": 3, "output": None,
        "rendered": None, "reply": None,
    }  # fmt: skip
    return {**base, **kw}


def test_embedded_json_cannot_close_the_script_element() -> None:
    text = embedded_json({"obs": "</script><script>alert(1)</script><!--"})
    assert "<" not in text
    assert json.loads(text) == {"obs": "</script><script>alert(1)</script><!--"}


def test_page_is_self_contained() -> None:
    page = render_page([], "out </title>")
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)
    assert "http://" not in page and "https://" not in page
    assert "out &lt;/title&gt;" in page


def test_code_renders_are_rebuilt_by_the_page_and_others_are_stored() -> None:
    raw = "\n".join(f"line {i}" for i in range(1, 11))
    code = CompressorOutput("code", ranges=(OmittedRange(2, 8, "middle"),))
    entry = candidate_entry(
        _row(kind="code", output=code.to_json(), rendered=render(code, raw)), raw
    )
    assert entry["rg"] == [[2, 8, "middle"]] and "ren" not in entry
    stale = candidate_entry(_row(kind="code", output=code.to_json(), rendered="other"), raw)
    assert stale["ren"] == "other"  # the page shows what the table holds when they differ
    same = candidate_entry(
        _row(kind="unchanged", output='{"type": "unchanged"}', rendered=raw), raw
    )
    assert same["same"] and "ren" not in same
    bad = candidate_entry(_row(valid=False, invalid_reason="no_json", reply="nope"), raw)
    assert bad["reply"] == "nope" and "ren" not in bad


def test_each_step_names_the_task_instance_its_raw_file_records(tmp_path: Path) -> None:
    from builder.ingest.parallel import InputSpec, run_ingest
    from builder.view.data import build_steps
    from tests.paths import SAMPLES

    run_ingest([InputSpec(str(SAMPLES))], tmp_path, workers=1)
    raw = {
        json.loads((SAMPLES / "mini-swe-agent" / "textstats__empty-summary.traj.json").read_text())[
            "instance_id"
        ],
        *(json.loads(line)["instance_id"] for line in (SAMPLES / "chat-messages" /
                                                        "textstats.jsonl").read_text().splitlines()),
    }  # fmt: skip
    steps = build_steps(tmp_path)
    assert steps and {s["inst"] for s in steps} == raw
