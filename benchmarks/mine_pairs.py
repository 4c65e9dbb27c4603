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
of the pair (`builder.actions.labelled.split_of`), before any tuning. `--write` replaces the
mined rows of tests/actions/labelled_pairs.jsonl and keeps the hand-written ones.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from builder.actions.labelled import LABELS_PATH, split_of  # noqa: E402

# beside the repository (../shared), or one level further up from a worktree
SAMPLES = next(
    (
        p / "shared" / "trajectories"
        for p in ROOT.parents
        if (p / "shared" / "trajectories").is_dir()
    ),
    ROOT.parent / "shared" / "trajectories",
)
Spec = dict  # {"tool": "bash", "command": ...} or {"tool": NAME, "arguments": {...}}
_XML_CALL = re.compile(r"<function=([\w-]+)>(.*?)</function>", re.S)
_XML_PARAM = re.compile(r"<parameter=(\w+)>(.*?)</parameter>", re.S)
_BASH_BLOCK = re.compile(r"```bash\n(.*?)```", re.S)


# ---------------------------------------------------------------- raw readers


def _bash(command: str) -> Spec:
    return {"tool": "bash", "command": command.strip()}


def mini_swe(path: Path) -> list[Spec]:
    data = json.loads(path.read_text(encoding="utf-8"))
    messages = data["messages"] if isinstance(data, dict) else data
    return [
        _bash(block)
        for m in messages
        if m.get("role") == "assistant"
        for block in _BASH_BLOCK.findall(m.get("content") or "")[:1]
    ]


def swe_agent(path: Path) -> list[Spec]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [_bash(step["action"]) for step in data["trajectory"] if step["action"].strip()]


def swe_smith(path: Path) -> Iterator[tuple[str, list[Spec]]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        specs: list[Spec] = []
        for m in row["messages"]:
            if m["role"] != "assistant":
                continue
            for name, body in _XML_CALL.findall(m.get("content") or "")[:1]:
                params = {k: v.strip("\n") for k, v in _XML_PARAM.findall(body)}
                if name in ("bash", "execute_bash"):
                    specs.append({"tool": "bash", "command": params.get("command", "")})
                elif name == "str_replace_editor":
                    if "view_range" in params:
                        params["view_range"] = json.loads(params["view_range"])  # type: ignore[assignment]
                    specs.append({"tool": name, "arguments": params})
                else:
                    specs.append({"tool": name, "arguments": params})
        yield row["instance_id"], specs


def openhands_log(path: Path) -> list[Spec]:
    data = json.loads(path.read_text(encoding="utf-8"))
    specs: list[Spec] = []
    for m in data["messages"]:
        for call in m.get("tool_calls") or []:
            name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
            args.pop("security_risk", None)
            if name in ("terminal", "execute_bash"):
                specs.append({"tool": "bash", "command": args["command"]})
            else:
                specs.append({"tool": name, "arguments": args})
    return specs


def trajectories() -> Iterator[tuple[str, list[Spec]]]:
    """(trajectory name, its actions in order) for every sample with usable actions."""
    for path in sorted((SAMPLES / "mini-swe-agent").rglob("*.traj.json")):
        yield f"mini-swe-agent/{path.name}", mini_swe(path)
    for path in sorted((SAMPLES / "swe-agent").glob("*.traj")):
        yield f"swe-agent/{path.name}", swe_agent(path)
    for instance, specs in swe_smith(SAMPLES / "swe-smith-messages" / "ft_xml_example.jsonl"):
        yield f"swe-smith/{instance}", specs
    for path in sorted((SAMPLES / "openhands-llm-log").glob("*.json")):
        yield f"openhands-llm-log/{path.name}", openhands_log(path)


# ---------------------------------------------------------------- categories


_SWE_COMMANDS = ("open", "goto", "edit", "create", "insert", "find_file", "search_dir", "scroll")
_CATEGORY_OF = {
    **dict.fromkeys(("cat", "nl", "head", "tail", "sed -n"), "read"),
    **dict.fromkeys(("grep", "rg", "find -name"), "search"),
    **dict.fromkeys(("ls", "tree", "find"), "list"),
    **dict.fromkeys(("sed -i", "cat <<", "rm", "touch", "mv", "cp", "chmod"), "edit"),
    **dict.fromkeys(("python", "python3", "pytest", "pip", "sh", "bash"), "run"),
    "git": "vcs",
}


def category(spec: Spec) -> str:
    """The kind of action, for per-category figures (read, search, edit, run, ...)."""
    tool = spec["tool"]
    if tool in ("submit", "finish"):
        return "submit"
    if tool != "bash":
        return "editor"
    command = spec["command"]
    if "COMPLETE_TASK_AND_SUBMIT" in command or command.strip() == "submit":
        return "submit"
    body = re.sub(r"^cd \S+ && ", "", command.strip())
    words = body.split()
    first = words[0] if words else ""
    if first in _SWE_COMMANDS:
        return "swe-agent"
    if first == "str_replace_editor":
        return "editor"
    if first == "sed":
        return "edit" if " -i" in body else "read"
    if first == "cat" and "<<" in body:
        return "edit"
    if first == "find":
        return "search" if "-name" in body or "| grep" in body or "xargs grep" in body else "list"
    if first.startswith("./") or first.startswith("/"):
        return "run"
    return _CATEGORY_OF.get(first, "other")


# ---------------------------------------------------------------- rewrites

Rewrite = Callable[[Spec, list[Spec]], "tuple[Spec, str] | None"]
_QUOTED = re.compile(r'"([^"$\'\\`]*)"')
_SED_RANGE = re.compile(r"sed -n '(\d+),(\d+)p'")
_PY_SCRIPT = re.compile(r"\bpython3? (\S+\.py)\b")


def _cmd(spec: Spec) -> str | None:
    return spec["command"] if spec["tool"] == "bash" else None


def _with(spec: Spec, command: str) -> Spec:
    return {"tool": "bash", "command": command}


def s_cd_root(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or category(spec) in ("swe-agent", "submit"):
        return None
    if c.startswith("cd /testbed && "):
        return _with(spec, c[len("cd /testbed && ") :]), "cd to the repository root is a no-op"
    if c.startswith("cd ") or not any("/testbed" in (_cmd(s) or "") for s in ctx):
        return None
    return _with(spec, "cd /testbed && " + c), "cd to the repository root is a no-op"


def s_root_path(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "/testbed/" not in c or c.startswith("cd ") or "\n" in c:
        return None
    return _with(spec, c.replace("/testbed/", "")), "repository-root prefix dropped from paths"


def s_quotes(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or not _QUOTED.search(c):
        return None
    return _with(spec, _QUOTED.sub(r"'\1'", c)), "double quotes swapped for single quotes"


def s_python3(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or not re.search(r"\bpython3? \S", c):
        return None
    swapped = (
        re.sub(r"\bpython3 ", "python ", c)
        if "python3 " in c
        else c.replace("python ", "python3 ", 1)
    )
    return _with(spec, swapped), "python vs python3: the same interpreter in these images"


def s_stderr(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or category(spec) != "run" or "2>&1" in c or ">" in c:
        return None
    return _with(spec, c + " 2>&1"), "stderr merged into the output the agent sees anyway"


def s_head_more(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = re.search(r"\| head -(\d+)$", c or "")
    if c is None or m is None:
        return None
    n = int(m.group(1))
    return _with(spec, c[: m.start()] + f"| head -{n + 10}"), "a few more lines of the same output"


def s_nl_sed(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r"nl -ba (\S+) \| sed -n '(\d+),(\d+)p'", (_cmd(spec) or "").strip())
    if m is None:
        return None
    path, a, b = m.groups()
    return _with(spec, f"sed -n '{a},{b}p' {path}"), "the same lines, without line numbers"


def d_wc(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or category(spec) not in ("search", "list") or "| head" in c:
        return None
    return _with(spec, c + " | wc -l"), "counts the results instead of showing them"


def d_redirect(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or "\n" in c or category(spec) != "run" or ">" in c or "pip " in c:
        return None  # `pip install > log` still installs: not clearly another action
    return _with(spec, c + " > output.log"), "output goes to a file; the agent sees none of it"


def d_other_script(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = _PY_SCRIPT.search(c or "")
    if c is None or m is None:
        return None
    others = sorted({s for x in ctx for s in _PY_SCRIPT.findall(_cmd(x) or "")} - {m.group(1)})
    if not others:
        return None
    return _with(spec, c.replace(m.group(1), others[0])), "runs a different script"


def d_sed_far(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = _SED_RANGE.search(c or "")
    if c is None or m is None:
        return None
    a, b = int(m.group(1)) + 300, int(m.group(2)) + 300
    return _with(spec, c[: m.start()] + f"sed -n '{a},{b}p'" + c[m.end() :]), "disjoint lines"


def d_grep_count(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or not re.search(r"\bgrep -n ", c) or "|" in c:
        return None
    return _with(
        spec, c.replace("grep -n ", "grep -c ", 1)
    ), "counts matches instead of showing them"


def d_grep_pattern(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    m = re.search(r'\bgrep (?:-\w+ )*"([^"]+)"', c or "")
    if c is None or m is None or "-v" in c[m.start() : m.start(1)]:
        return None  # a `grep -v` filter's pattern may exclude nothing either way
    seen = {p for x in ctx for p in re.findall(r'\bgrep (?:-\w+ )*"([^"]+)"', _cmd(x) or "")}
    others = sorted(seen - {m.group(1)})
    if not others:
        return None
    return _with(spec, c[: m.start(1)] + others[0] + c[m.end(1) :]), "searches for something else"


def d_find_ext(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = _cmd(spec)
    if c is None or '-name "*.py"' not in c:
        return None
    return _with(spec, c.replace('-name "*.py"', '-name "*.txt"')), "looks for another file type"


def d_ls_recursive(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    c = (_cmd(spec) or "").strip()
    if re.fullmatch(r"ls -R (\S+)", c):
        return _with(spec, c.replace("ls -R ", "ls ")), "one level instead of the whole tree"
    target = c.split()[-1] if len(c.split()) > 1 else "."
    if re.search(r"\.\w+$", target):
        return None  # `ls -R file.py` lists the same one file
    if re.fullmatch(r"ls( -\w+)?( \S+)?", c) and "R" not in c:
        return _with(spec, c.replace("ls", "ls -R", 1)), "the whole tree instead of one level"
    return None


def d_rm_subset(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r"(.*\brm (?:-f )?)(\S+)( \S+)+", (_cmd(spec) or "").strip())
    if m is None:
        return None
    return _with(spec, m.group(1) + m.group(2)), "deletes only one of the files"


def _editor(spec: Spec, command: str) -> dict | None:
    if spec["tool"] != "str_replace_editor" or spec["arguments"].get("command") != command:
        return None
    return spec["arguments"]


def _tool(args: dict) -> Spec:
    return {"tool": "str_replace_editor", "arguments": args}


def s_view_shell(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None:
        return None
    rng = args.get("view_range")
    if rng:
        command = f"cat -n {args['path']} | sed -n '{rng[0]},{rng[1]}p'"
        return _with(spec, command), "the same lines of the same file through the shell"
    return _with(spec, f"cat -n {args['path']}"), "the whole file through the shell"


def s_view_wider(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or not args.get("view_range") or args["view_range"][0] <= 3:
        return None
    a, b = args["view_range"]
    return _tool({**args, "view_range": [a - 2, b + 2]}), "a slightly wider window, same lines"


def s_new_ws(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "str_replace") or _editor(spec, "create")
    if args is None:
        return None
    key = "new_str" if args["command"] == "str_replace" else "file_text"
    text = str(args.get(key, ""))
    changed = text.rstrip() if text != text.rstrip() else text + "\n"
    return _tool({**args, key: changed}), "new text differs only in trailing whitespace"


def d_view_far(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or not args.get("view_range"):
        return None
    a, b = args["view_range"]
    return _tool({**args, "view_range": [b + 200, b + 200 + (b - a)]}), "a disjoint window"


def d_view_other_file(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None:
        return None
    base = args["path"].rsplit("/", 1)[-1]
    paths = sorted(
        p
        for p in {x["arguments"]["path"] for x in ctx if _editor(x, "view")}
        if p.rsplit("/", 1)[-1] != base  # `hello.py` and `/abs/hello.py` were one file
    )
    if not paths:
        return None
    return _tool({**args, "path": paths[0]}), "the same window of another file"


def d_view_whole(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "view")
    if args is None or not args.get("view_range"):
        return None
    whole = {k: v for k, v in args.items() if k != "view_range"}
    return _tool(whole), "the whole file instead of a window of it"


def d_other_new(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "str_replace")
    if args is None:
        return None
    news = [
        x["arguments"]["new_str"]
        for x in ctx
        if _editor(x, "str_replace") and x["arguments"]["old_str"] != args["old_str"]
    ]
    if not news:
        return None
    return _tool({**args, "new_str": news[0]}), "same anchor, an unrelated replacement"


def d_other_anchor(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "str_replace")
    if args is None:
        return None
    others = [
        x["arguments"]
        for x in ctx
        if _editor(x, "str_replace")
        and x["arguments"]["path"] == args["path"]
        and x["arguments"]["old_str"] != args["old_str"]
    ]
    if not others:
        return None
    return _tool({**args, "old_str": others[0]["old_str"]}), "another anchor in the same file"


def d_other_content(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    args = _editor(spec, "create")
    if args is None:
        return None
    texts = [
        x["arguments"]["file_text"]
        for x in ctx
        if _editor(x, "create") and x["arguments"]["file_text"] != args["file_text"]
    ]
    if not texts:
        return None
    return _tool({**args, "file_text": texts[0]}), "same path, other content"


def d_open_far(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r'open "?([^"\s]+)"? (\d+)', (_cmd(spec) or "").strip())
    if m is None:
        return None
    line = int(m.group(2))
    far = line + 400 if line < 400 else line - 400
    return _with(spec, f"open {m.group(1)} {far}"), "opens the file 400 lines away"


def s_open_quotes(spec: Spec, ctx: list[Spec]) -> tuple[Spec, str] | None:
    m = re.fullmatch(r'open "([^"\s]+)" (\d+)', (_cmd(spec) or "").strip())
    if m is None:
        return None
    return _with(spec, f"open {m.group(1)} {m.group(2)}"), "quoting only"


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
    """Every mined row: follow pairs, then one same and one different rewrite per action."""
    rows: list[dict] = []
    seen: set[str] = set()
    for name, specs in trajectories():
        for i, spec in enumerate(specs):
            pairs: list[tuple[Spec, Spec, bool, str, str]] = []
            if i + 1 < len(specs) and specs[i + 1] != spec:
                why = FOLLOW_SAME.get((name, i))
                reason = why or "the action that actually followed: another step of the work"
                pairs.append((spec, specs[i + 1], why is not None, reason, f"follow:{name}#{i}"))
            for rewrites, same in ((SAME_REWRITES, True), (DIFFERENT_REWRITES, False)):
                out = _first(rewrites, spec, specs, i)
                if out is not None:
                    pairs.append((spec, out[0], same, out[1], f"rewrite:{name}#{i}"))
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
