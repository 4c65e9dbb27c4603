"""Mine labelled action pairs from the real trajectories in ../shared/trajectories.

Run: `.venv/bin/python benchmarks/mine_pairs.py [--write]`. Actions are read straight from the
raw files with `json` (not through the adapters), per trajectory in order. Two kinds of pairs:

- *follow*: each real action with the action that actually followed it. Consecutive actions
  are different unless I judged otherwise; the judged exceptions are listed in
  `FOLLOW_SAME` with a reason (every follow pair was read by a person before labelling).
- *alternative*: a real action with a plausible rewrite (`ALTERNATIVES`): each rewrite has a
  fixed label that says whether the rewrite is still the same action, and why. Rewrites are
  only applied where they make sense; each produced pair was read before it was committed.

Labels come from these rules, never from a similarity's score. The split is decided by a hash
of the pair (`builder.similarity.labelled.split_of`), before any tuning. `--write` replaces the
mined rows of tests/similarity/labelled_pairs.jsonl and keeps the hand-written ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mining_editor import (  # noqa: E402
    d_open_far,
    d_other_anchor,
    d_other_content,
    d_other_new,
    d_view_far,
    d_view_other_file,
    d_view_whole,
    s_new_ws,
    s_open_quotes,
    s_view_shell,
    s_view_wider,
)
from mining_more import DIFFERENT_MORE, SAME_MORE  # noqa: E402
from mining_raw import Spec, category, trajectories  # noqa: E402
from mining_shell import (  # noqa: E402
    Rewrite,
    d_find_ext,
    d_grep_count,
    d_grep_pattern,
    d_ls_recursive,
    d_other_script,
    d_redirect,
    d_rm_subset,
    d_sed_far,
    d_wc,
    s_cd_root,
    s_head_more,
    s_nl_sed,
    s_python3,
    s_quotes,
    s_root_path,
    s_stderr,
)
from mining_third import DIFFERENT_THIRD, SAME_THIRD  # noqa: E402

from builder.similarity.labelled import LABELS_PATH, split_of  # noqa: E402

SAME_REWRITES: list[Rewrite] = [
    s_nl_sed,
    s_view_shell,
    s_new_ws,
    s_open_quotes,
    s_cd_root,
    s_root_path,
    s_view_wider,
    s_head_more,
    s_quotes,
    s_python3,
    s_stderr,
]
DIFFERENT_REWRITES: list[Rewrite] = [
    d_other_new,
    d_other_content,
    d_open_far,
    d_sed_far,
    d_view_far,
    d_other_anchor,
    d_view_other_file,
    d_view_whole,
    d_ls_recursive,
    d_grep_count,
    d_grep_pattern,
    d_find_ext,
    d_wc,
    d_redirect,
    d_other_script,
    d_rm_subset,
]

# (rewrites, label, source kind); later rounds were added later and only append pairs
ROUNDS: list[tuple[list[Rewrite], bool, str]] = [
    (SAME_REWRITES, True, "rewrite"),
    (DIFFERENT_REWRITES, False, "rewrite"),
    (SAME_MORE, True, "rewrite2"),
    (DIFFERENT_MORE, False, "rewrite2"),
    (SAME_THIRD, True, "rewrite3"),
    (DIFFERENT_THIRD, False, "rewrite3"),
]

# follow pairs judged the same action after reading them: (trajectory, index of the first) -> why
FOLLOW_SAME: dict[tuple[str, int], str] = {
    ("swe-agent/marshmallow-code__marshmallow-1867.traj", 6): (
        "the same replacement of the same anchor, re-issued with the new line indented"
    ),
    ("swe-agent/pydicom__pydicom-1458.traj", 5): (
        "the same lines replaced with the same code; the retry restores one omitted line"
    ),
    ("swe-agent/pydicom__pydicom-1458.traj", 7): (
        "the same replacement text; the retry widens the line range by one (off-by-one fix)"
    ),
    (
        "openhands-llm-log/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json",
        2,
    ): ("views the same hello.py, relative then absolute after the editor rejected it"),
}


# ---------------------------------------------------------------- assembly


def _row(a: Spec, b: Spec, same: bool, reason: str, source: str) -> dict:
    return {
        "a": a,
        "b": b,
        "same": same,
        "reason": reason,
        "category": category(a),
        "source": source,
        "split": split_of(a, b),
    }


def _first(rewrites: list[Rewrite], spec: Spec, ctx: list[Spec], start: int) -> tuple | None:
    """The first rewrite that applies and changes the action, rotating by `start`."""
    for k in range(len(rewrites)):
        out = rewrites[(start + k) % len(rewrites)](spec, ctx)
        if out is not None and out[0] != spec:
            return out
    return None


def mine() -> list[dict]:
    """Every mined row: follow pairs, then one same and one different rewrite per action and
    round."""
    rows: list[dict] = []
    seen: set[str] = set()
    for name, specs in trajectories():
        for i, spec in enumerate(specs):
            pairs: list[tuple[Spec, Spec, bool, str, str]] = []
            if i + 1 < len(specs) and specs[i + 1] != spec:
                why = FOLLOW_SAME.get((name, i))
                reason = why or "the action that actually followed: another step of the work"
                pairs.append((spec, specs[i + 1], why is not None, reason, f"follow:{name}#{i}"))
            for rewrites, same, kind in ROUNDS:
                out = _first(rewrites, spec, specs, i)
                if out is not None:
                    pairs.append((spec, out[0], same, out[1], f"{kind}:{name}#{i}"))
            for a, b, same, reason, source in pairs:
                key = json.dumps([a, b], sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    rows.append(_row(a, b, same, reason, source))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update labelled_pairs.jsonl")
    parser.add_argument("--show", action="store_true", help="print every mined pair")
    args = parser.parse_args()
    rows = mine()
    if args.show:
        for r in rows:
            side = [
                r["a"].get("command") or json.dumps(r["a"].get("arguments"))[:160],
                r["b"].get("command") or json.dumps(r["b"].get("arguments"))[:160],
            ]
            print(f"{r['source']} same={r['same']} ({r['reason']})")
            print("   A:", side[0][:160].replace("\n", "\\n"))
            print("   B:", side[1][:160].replace("\n", "\\n"))
    by_kind: dict[str, int] = {}
    for r in rows:
        kind = r["source"].split(":", 1)[0]
        by_kind[kind] = by_kind.get(kind, 0) + 1
    print(f"{len(rows)} mined pairs {by_kind}, same={sum(r['same'] for r in rows)}")
    if args.write:
        kept = [
            line
            for line in LABELS_PATH.read_text(encoding="utf-8").splitlines()
            if line.strip()
            and not json.loads(line).get("source", "").startswith(("follow", "rewrite"))
        ]
        mined = [json.dumps(r, ensure_ascii=False) for r in rows]
        LABELS_PATH.write_text("\n".join(kept + mined) + "\n", encoding="utf-8")
        print(f"wrote {LABELS_PATH}: {len(kept)} hand-written + {len(mined)} mined rows")


if __name__ == "__main__":
    main()
