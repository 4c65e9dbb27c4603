"""Actions of the real sample trajectories, read straight from the raw files with `json`,
and the category of an action (for per-category agreement figures)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
