"""Rebuild the exact context the agent saw before its next action, optionally with a compressed
observation in place of the raw one, and with earlier observations as a `Prefix` says.

The context is every message before the next assistant turn: the history, the action, and the
observation message (plus anything the harness added after it, such as a reminder), so that
with the raw observation it equals the logged prompt. Only observation payloads change: the
harness's envelope (mini-swe-agent `<returncode>`/`<output>`, SWE-smith `OBSERVATION:`) and
the tool message's `tool_call_id` stay as logged.

Earlier observations (`Prefix.mode`): `raw` shows each as it ran (a deployed run's raw outputs
restored), `compressed` puts `Prefix.texts` in place of earlier eligible ones (raw elsewhere),
`deployed` keeps a deployed run's context as logged. The judged observation is raw (a deployed
run's restored) unless a candidate is put in its place.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from builder.ingest.formats.base import FormatAdapter
from builder.steps.tool_sets import ToolSet, resolve_tools
from schemas.common import RAW_PREFIX
from schemas.steps import StepRecord
from schemas.trajectories import Message, TrajectoryRecord

COMPRESSED = "compressed"
DEPLOYED = "deployed"


@dataclass(frozen=True)
class Prefix:
    """What the agent sees of the observations before the judged one."""

    mode: str = RAW_PREFIX  # raw | compressed | deployed
    texts: tuple[tuple[int, str], ...] = ()  # (message index, payload shown), compressed mode

    def replaced(self, traj: TrajectoryRecord, step: StepRecord, adapter: FormatAdapter) -> int:
        """Earlier observations shown otherwise than raw (compressed, or as deployed)."""
        if self.mode != DEPLOYED:
            return len(self.texts)
        earlier = traj.messages[: step.observation_message_index]
        return sum(
            m.raw_output is not None and m.raw_output != adapter.split_observation(m)[1]
            for m in earlier
        )


RAW = Prefix()


def context_end(messages: list[Message], observation_index: int) -> int:
    """Index just past the last message the agent saw before its next turn."""
    end = observation_index + 1
    while end < len(messages) and messages[end].role != "assistant":
        end += 1
    return end


def substitute(message: Message, adapter: FormatAdapter, rendered: str) -> Message:
    """The observation message with its payload replaced, envelope and ids untouched."""
    content = adapter.with_payload(message, rendered)
    return dataclasses.replace(message, content=content, content_parts=None)


def agent_context(
    traj: TrajectoryRecord,
    step: StepRecord,
    adapter: FormatAdapter,
    rendered: str | None = None,
    prefix: Prefix = RAW,
) -> list[Message]:
    """The messages for the agent request of `step`; `rendered=None` keeps the raw observation
    (`prefix`: what the earlier observations show, see the module)."""
    messages = traj.messages
    index = step.observation_message_index
    context = list(messages[: context_end(messages, index)])
    if prefix.mode != DEPLOYED:
        for i, message in enumerate(context):
            if message.raw_output is not None and i != index:
                context[i] = substitute(message, adapter, message.raw_output)
    for i, text in prefix.texts:
        if i < index:
            context[i] = substitute(messages[i], adapter, text)
    if rendered is None:
        rendered = messages[index].raw_output  # a deployed run's observation, restored
    if rendered is not None:
        context[index] = substitute(messages[index], adapter, rendered)
    return context


def shared_prefix_length(step: StepRecord) -> int:
    """Messages shared by every agent request of a step (for explicit prompt caching)."""
    return step.observation_message_index


def tools_of(traj: TrajectoryRecord) -> tuple[dict[str, Any], ...] | None:
    """The tool schemas of the agent's requests, in OpenAI function format, or None: the
    recorded ones, else the harness's, with inferred ones for any other tool called
    (`builder.steps.tool_sets`). Resolved once per trajectory: every request of its steps
    asks."""
    key = (traj.trajectory_id, len(traj.messages), traj.tools, traj.harness, traj.metadata)
    found = _TOOLS.get(key)
    if found is None:
        if len(_TOOLS) >= _TOOLS_KEPT:
            _TOOLS.clear()
        found = _TOOLS[key] = resolve_tools(traj)
    return found.tools


_TOOLS: dict[tuple[Any, ...], ToolSet] = {}
_TOOLS_KEPT = 4096
