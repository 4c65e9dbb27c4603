"""Action similarities: registry, exact/normalized/semantic rules, and the labelled table."""

from __future__ import annotations

import json
import re

import pytest

from builder.config.stages import GateConfig
from builder.errors import ConfigError
from builder.ingest.formats.base import shell_action, tool_call_action
from builder.similarity.compare import SIMILARITIES, get_similarity, semantic
from builder.similarity.labelled import LABELS_PATH, agreement, load_pairs, split_of
from schemas.steps import Action
from tests.paths import SHARED

SAMPLES = SHARED
PAIRS = load_pairs()
THETA = GateConfig().threshold


def sh(command: str) -> Action:
    return shell_action(command, raw=command)


def ed(**arguments: object) -> Action:
    return tool_call_action("str_replace_editor", arguments)


def sem(a: str, b: str) -> float:
    return semantic(sh(a), sh(b))


# ---------------------------------------------------------------- registry


def test_registry_has_the_three_measures_and_rejects_others() -> None:
    assert set(SIMILARITIES) == {"exact", "normalized", "semantic"}
    assert get_similarity("semantic") is semantic
    with pytest.raises(ConfigError, match="unknown similarity 'fuzzy'"):
        get_similarity("fuzzy")


def test_exact_needs_identical_records() -> None:
    exact = get_similarity("exact")
    assert exact(sh("ls -la"), sh("ls -la")) == 1.0
    assert exact(sh("ls -la"), sh("ls  -la")) == 0.0


def test_normalized_is_binary_over_lexical_variants() -> None:
    norm = get_similarity("normalized")
    assert norm(sh("cd /testbed && grep -rn 'x' ./src"), sh('grep -nr "x" src')) == 1.0
    assert norm(sh("python reproduce.py"), sh("python3 reproduce.py")) == 0.0
    assert norm(sh("ls"), ed(command="view", path="x")) == 0.0


# ---------------------------------------------------------------- semantic rules


def test_whitespace_collapse_is_the_fast_path() -> None:
    assert sem("grep  -rn foo\n.", "grep -rn foo .") == 1.0


def test_flag_bundles_and_order_do_not_matter() -> None:
    assert sem("grep -rn foo src/", "grep -n -r foo src/") == 1.0
    assert sem("ls -la", "ls -al") == 1.0


def test_cd_prefix_resolves_file_targets() -> None:
    assert sem("cd /testbed/django && grep -rn x contrib/", "grep -rn x django/contrib") == 1.0
    assert sem("cd /testbed && cat a.py", "cat /testbed/a.py") == 1.0


def test_sed_ranges_score_by_overlap() -> None:
    same = sem("nl -ba f.py | sed -n '150,180p'", "sed -n '150,180p' f.py")
    close = sem("sed -n '150,180p' f.py", "sed -n '145,185p' f.py")
    apart = sem("sed -n '1,50p' f.py", "sed -n '200,250p' f.py")
    assert same == 1.0
    assert 0.65 <= close < 1.0
    assert apart < 0.65


def test_heredoc_content_decides_between_writes_to_the_same_file() -> None:
    a = "cat <<'EOF' > r.py\nfrom a import f\nprint(f(1))\nEOF"
    b = "cat > r.py << 'EOF'\nfrom a import f\nprint(f( 1 ))\nEOF"
    c = "cat <<'EOF' > r.py\nimport numpy as np\nnp.zeros(3).sum()\nEOF"
    assert sem(a, b) == 1.0
    assert sem(a, c) < 0.65


def test_submit_versus_anything_else_is_zero() -> None:
    submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"
    assert sem(submit, "git add -A && git diff --cached") == 0.0
    # the marker alone submits no diff: another submission (issue 26, class 7)
    assert sem(submit, "echo MINI_SWE_AGENT_FINAL_OUTPUT") == 0.0
    assert (
        sem(
            submit,
            submit.replace("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT"),
        )
        == 1.0
    )
    assert semantic(tool_call_action("submit", {}), sh("submit")) == 1.0
    assert semantic(tool_call_action("finish", {}), ed(command="view", path="a.py")) == 0.0


def test_different_intents_are_capped_below_the_gate() -> None:
    assert sem("python reproduce.py", "cat reproduce.py") <= 0.25  # run vs read: other groups
    assert sem("cat a.py | grep -n import", "cat a.py") <= 0.5  # search vs read: same group
    assert sem("sed -i 's/a/b/' f.py", "sed -n '1,20p' f.py") <= 0.25


def test_decisive_mismatches_are_capped() -> None:
    assert sem("cat a.py", "cat b.py") <= 0.5
    assert sem('grep -rn "foo" .', 'grep -rn "bar" .') <= 0.5
    assert sem("git diff", "git status") <= 0.4
    assert sem('echo "x" > a.txt', 'echo "x" >> a.txt') <= 0.5


def test_multi_command_lines_are_aligned() -> None:
    assert sem("cd /testbed && python a.py && echo done", "python a.py") == 1.0
    # every command must match: an extra one is another action, not half of the same one
    assert sem("python a.py", "python a.py && python b.py") == 0.0


def test_editor_calls_compare_field_wise() -> None:
    view = ed(command="view", path="/testbed/a.py", view_range=[100, 150])
    assert semantic(view, ed(command="view", path="a.py", view_range=[95, 160])) >= 0.65
    assert semantic(view, ed(command="view", path="/testbed/a.py", view_range=[300, 350])) < 0.65
    assert semantic(view, ed(command="view", path="/testbed/b.py", view_range=[100, 150])) == 0.0
    edit = ed(command="str_replace", path="a.py", old_str="return x", new_str="return y")
    other_new = ed(command="str_replace", path="a.py", old_str="return x", new_str="return z")
    spaced = ed(command="str_replace", path="a.py", old_str="return x", new_str="return  y\n")
    assert semantic(edit, other_new) < 0.65  # another replacement for the same anchor
    assert semantic(edit, spaced) == 1.0
    assert (
        semantic(
            edit, ed(command="str_replace", path="a.py", old_str="def f():", new_str="return y")
        )
        == 0.0
    )
    assert semantic(edit, ed(command="create", path="a.py", file_text="return y")) == 0.0


def test_editor_view_and_shell_read_of_the_same_lines_agree() -> None:
    view = ed(command="view", path="/testbed/a.py", view_range=[1, 50])
    assert semantic(view, sh("cat -n a.py | sed -n '1,50p'")) == 1.0
    assert semantic(view, sh("cat -n b.py | sed -n '1,50p'")) < 0.65


def test_scores_are_symmetric_and_in_range() -> None:
    for pair in PAIRS:
        ab, ba = semantic(pair.a, pair.b), semantic(pair.b, pair.a)
        assert 0.0 <= ab <= 1.0
        assert ab == pytest.approx(ba), pair.reason


def test_real_trajectory_commands_parse_and_match_themselves() -> None:
    path = SAMPLES / "mini-swe-agent" / "django__django-16255" / "django__django-16255.traj.json"
    messages = json.loads(path.read_text(encoding="utf-8"))["messages"]
    commands = [
        block
        for m in messages
        if m["role"] == "assistant"
        for block in re.findall(r"```bash\n(.*?)```", m["content"], re.S)
    ]
    assert len(commands) > 10
    actions = [sh(c) for c in commands]
    for action in actions:
        assert semantic(action, action) == 1.0
        assert semantic(sh(action.command + " "), action) == 1.0
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in (actions[-1].command or "")
    assert semantic(actions[-1], sh("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")) == 0.0
    assert semantic(actions[0], actions[-1]) == 0.0


# ---------------------------------------------------------------- the labelled table

ROWS = [json.loads(line) for line in LABELS_PATH.read_text(encoding="utf-8").splitlines()]
HOLDOUT = [p for p in PAIRS if p.split == "holdout"]
MINED = ("follow:", "rewrite:", "rewrite2:", "rewrite3:")  # sources of pairs mined from the samples
CATEGORIES = {"read", "search", "edit", "run", "vcs", "list", "submit", "editor", "swe-agent"}


def test_labelled_table_is_large_categorised_explained_and_mostly_real() -> None:
    assert len(ROWS) == len(PAIRS) >= 300
    assert 0.3 < sum(r["same"] for r in ROWS) / len(ROWS) < 0.7
    assert all(r["reason"].strip() and r["category"] for r in ROWS)
    assert {r["category"] for r in ROWS} >= CATEGORIES
    mined = [r for r in ROWS if r["source"].startswith(MINED)]
    assert len(mined) >= len(ROWS) / 2  # pairs built from real trajectory actions
    assert sum(r["source"].startswith("follow:") for r in ROWS) >= 100  # actions that followed


def test_the_split_is_the_hash_of_the_pair_decided_before_tuning() -> None:
    for row in ROWS:
        if row["source"] == "hand":  # the table the similarity was first built on
            assert row["split"] == "design"
        else:
            assert row["split"] == split_of(row["a"], row["b"]), row["reason"]
    assert len(HOLDOUT) >= 150 and sum(p.same for p in HOLDOUT) >= 50


def test_mined_rows_quote_real_actions_of_the_samples() -> None:
    """Every mined pair's first action occurs verbatim in the raw sample it names."""
    texts: dict[str, str] = {}
    for row in ROWS:
        if not row["source"].startswith(MINED):
            continue
        name = row["source"].split(":", 1)[1].rsplit("#", 1)[0]
        folder, _, file = name.partition("/")
        if folder == "swe-smith":
            path = SAMPLES / "swe-smith-messages" / "ft_xml_example.jsonl"
        else:
            path = next((SAMPLES / folder).rglob(file))
        text = texts.setdefault(str(path), path.read_text(encoding="utf-8"))
        a = row["a"]
        needle = a.get("command") or next(
            (str(v) for k, v in sorted(a.get("arguments", {}).items()) if k == "path"), ""
        )
        assert json.dumps(needle)[1:-1][:60] in text or needle[:60] in text, row["source"]


def test_semantic_meets_the_floors_on_the_held_out_split() -> None:
    """Held out, at the default θ. The floors of issue 10 were precision of "same" 0.98 and
    recall 0.85 (then measured 0.983 / 0.983 at θ 0.65 with the bag-of-words similarity).
    The strict similarity of issue 26 measures 1.000 / 0.924 (109 of 118 "same", no false
    "same"): several "same" labels of this table are leniencies the issue calls wrong (a
    truncated output, a file filter on one side, the submit marker alone)."""
    result = agreement(semantic, HOLDOUT, threshold=THETA)
    assert result.precision >= 0.98, result.as_dict()
    assert result.recall >= 0.85, result.as_dict()


def test_semantic_on_the_design_split() -> None:
    """Measured 1.000 / 0.762 at the default θ (issue 26: strict by construction)."""
    result = agreement(semantic, [p for p in PAIRS if p.split == "design"], threshold=THETA)
    assert result.precision >= 0.98 and result.recall >= 0.75, result.as_dict()


def test_semantic_agrees_better_than_normalized_and_exact() -> None:
    scores = {name: agreement(sim, PAIRS).accuracy for name, sim in SIMILARITIES.items()}
    assert scores["semantic"] > scores["normalized"] >= scores["exact"]
    assert agreement(get_similarity("normalized"), PAIRS).fp == 0


def test_mined_rows_are_what_the_committed_miner_produces_from_the_raw_files() -> None:
    """`benchmarks/mine_pairs.py` reads the samples with json; its output is the table's
    mined rows, labels included, so no mined label was edited to suit the similarity."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "mine_pairs", LABELS_PATH.parents[2] / "benchmarks" / "mine_pairs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mined = [r for r in ROWS if r["source"].startswith(MINED)]
    assert module.mine() == mined
