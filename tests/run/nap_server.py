"""A scripted OpenAI-compatible endpoint that behaves like a teacher and an agent, so whole runs
(CLI subprocesses included) can be tested and benchmarked against real HTTP.

Teacher requests (they carry `response_format`) get a fixed menu of compressions per sample
index; agent requests repeat the previous command unless the observation is a plain summary,
in which case the agent "gets lost" and lists files. So plain summaries fail the gate and
line-range compressions pass: a deterministic, realistic pattern. An agent whose context
already holds a compressed observation (an online round's prefix) has learnt the format and
follows a plain summary too, so online rounds pass candidates the offline round failed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.llm.servers import FakeAPIServer
from tests.paths import SAMPLES

# the sort key of every table, to compare two runs row for row
KEYS = {
    "candidates": ["trajectory_id", "step_index", "candidate_index"],
    "references": ["trajectory_id", "step_index", "reference_index"],
    "judgements": ["trajectory_id", "step_index", "candidate_index"],
    "supervision": ["trajectory_id", "step_index", "rank"],
    "preferences": [
        "trajectory_id",
        "step_index",
        "chosen_candidate_index",
        "rejected_candidate_index",
    ],
    "prefixes": ["trajectory_id", "step_index"],
    "round_steps": ["trajectory_id", "step_index"],
    "trajectories": ["trajectory_id"],
    "steps": ["trajectory_id", "step_index"],
}

COMPRESSED = "[output compressed"  # the marker line of every rendered compression
_LINES = re.compile(r'<output lines="(\d+)">')
_BASH = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
_CLINE = re.compile(r"<execute_command>\s*<command>(.*?)</command>", re.DOTALL)  # Cline's XML


def teacher_reply(body: dict[str, Any], index: int) -> str:
    prompt = body["messages"][-1]["content"]
    match = _LINES.search(prompt)
    lines = int(match.group(1)) if match else 1
    half = max(1, lines // 2)
    menu = [
        {"type": "plain", "content": "the command printed its usual output"},
        {"type": "code", "content": [f"1-{half}: the first {half} lines"]} if lines > 3 else None,
        {"type": "unchanged"},
        {"type": "code", "content": [f"2-{max(2, lines - 2)}: middle lines"]}
        if lines > 5
        else None,
    ]
    choice = menu[index % len(menu)] or {"type": "unchanged"}
    return json.dumps(choice)


def _previous_command(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            arguments = json.loads(call["function"]["arguments"] or "{}")
            if "command" in arguments:
                return str(arguments["command"])
        found = _BASH.findall(message.get("content") or "") or _CLINE.findall(
            message.get("content") or ""
        )
        if found:
            return found[-1]
    return "ls"


def shell_tool(tools: list[dict[str, Any]]) -> str:
    """The name of the offered tool that takes a `command` (Claude Code's `Bash`), or bash."""
    for tool in tools:
        function = tool.get("function", tool)
        schema = function.get("parameters") or function.get("input_schema") or {}
        if "command" in (schema.get("properties") or {}):
            return str(function["name"])
    return "bash"


def agent_reply(body: dict[str, Any]) -> str | dict[str, Any]:
    messages = body["messages"]
    observation = str(messages[-1].get("content") or "")
    used_to_it = any(COMPRESSED in str(m.get("content") or "") for m in messages[:-1])
    lost = observation.count("[output compressed: summary") > 0 and not used_to_it
    command = "ls -la" if lost else _previous_command(messages)
    if body.get("tools"):
        arguments = json.dumps({"command": command})
        function = {"name": shell_tool(body["tools"]), "arguments": arguments}
        call = {"id": "call_x", "type": "function", "function": function}
        return {"role": "assistant", "content": "Next step.", "tool_calls": [call]}
    if any("<execute_command>" in (m.get("content") or "") for m in messages):  # Cline's grammar
        return f"<execute_command>\n<command>{command}</command>\n</execute_command>"
    return f"THOUGHT: next step.\n\n```bash\n{command}\n```"


def anthropic_nap_content(body: dict[str, Any], number: int) -> list[dict[str, Any]]:
    """The same teacher and agent behind the Messages API: the forced `respond` tool answers
    the teacher; the agent calls the shell tool it is offered (tool_use blocks)."""
    tools = body.get("tools") or []
    if body.get("tool_choice", {}).get("name") == "respond":
        prompt = "".join(b.get("text", "") for b in body["messages"][-1]["content"])
        reply = teacher_reply({"messages": [{"content": prompt}]}, number)
        return [{"type": "tool_use", "id": f"toolu_{number}", "name": "respond",
                 "input": json.loads(reply)}]  # fmt: skip
    command = "ls"
    for message in reversed(body["messages"]):
        uses = [b for b in message["content"] if b.get("type") == "tool_use"]
        if message["role"] == "assistant" and uses and "command" in uses[0]["input"]:
            command = str(uses[0]["input"]["command"])
            break
    last = json.dumps(body["messages"][-1]["content"])
    used_to_it = any(COMPRESSED in json.dumps(m["content"]) for m in body["messages"][:-1])
    if "[output compressed: summary" in last and not used_to_it:
        command = "ls -la"
    if not tools:
        return [{"type": "text", "text": f"```bash\n{command}\n```"}]
    use = {"type": "tool_use", "id": f"toolu_{number}", "name": shell_tool(tools),
           "input": {"command": command}}  # fmt: skip
    return [{"type": "text", "text": "Next step."}, use]


def nap_text(body: dict[str, Any], index: int, number: int) -> str | dict[str, Any]:
    if body.get("response_format"):
        return teacher_reply(body, index)
    return agent_reply(body)


def nap_server(latency_s: float = 0.0) -> FakeAPIServer:
    return FakeAPIServer(api="openai", latency_s=latency_s, text=nap_text)


def replicate_samples(dest: Path, copies: int) -> Path:
    """`copies` variants of each project sample with unique tasks (so distinct trajectories)."""
    dest.mkdir(parents=True, exist_ok=True)
    mini_text = (SAMPLES / "mini-swe-agent/textstats__empty-summary.traj.json").read_text()
    chat_text = (SAMPLES / "chat-messages/textstats.jsonl").read_text().splitlines()[0]
    with (dest / "chat.jsonl").open("w") as out:
        for k in range(copies):
            mini = json.loads(mini_text)
            mini["instance_id"] = f"textstats__empty-summary-{k}"
            mini["messages"][1]["content"] += f"\n(copy {k})"
            (dest / f"mini-{k}.traj.json").write_text(json.dumps(mini))
            chat = json.loads(chat_text)
            chat["instance_id"] = f"textstats__one-decimal-{k}"
            chat["messages"][1]["content"] += f"\n(copy {k})"
            out.write(json.dumps(chat) + "\n")
    return dest


def run_config(corpus: Path, base_url: str, out: Path, **extra: Any) -> str:
    """A pipeline YAML that points teacher and agent at `base_url`."""
    config = {
        "inputs": [{"path": str(corpus)}],
        "teacher": {
            "provider": "openai",
            "model": "fake-teacher",
            "base_url": base_url,
            "samples": 4,
        },
        "agent": {"provider": "openai", "model": "fake-agent", "base_url": base_url},
        "references": {"mode": "sampled", "samples": 2},
        "limits": {"concurrency": 8},
        "output": {"dir": str(out), "shard_size": 1, "progress": False},
        "selection": {"max_per_step": 2},
    }
    for key, value in extra.items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    return json.dumps(config)  # JSON is YAML


def serve_forever(latency_s: float, fast: bool = False) -> None:
    """Run the scripted endpoint in its own process (benchmarks: no GIL shared with the run).
    `fast`: the asyncio server (keeps up with hundreds of requests/s, records bodies)."""
    import sys
    import threading

    from tests.llm.servers import AsyncOpenAIServer

    server = (
        AsyncOpenAIServer(latency_s=latency_s, text=nap_text, record=True)
        if fast
        else nap_server(latency_s)
    )
    with server:
        print(f"PORT {server.port}", flush=True)
        sys.stdin.read()  # until the parent closes our stdin
        threading.Event().set()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fast", action="store_true")
    args = parser.parse_args()
    serve_forever(args.latency, args.fast)
