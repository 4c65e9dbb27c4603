"""The deployed-run convention: an agent that ran with a compressor logs, for each compressed
observation, both what it saw and the raw tool output (README, "Online rounds").

Message-list harnesses keep the raw output beside the observation: mini-swe-agent in the
message's `extra.raw_output` (its own per-message metadata, never sent to the model), chat
rows (SWE-smith, OpenAI message lists, SWE-agent history) in a `raw_output` key beside
`content`. `content` holds what the agent saw, envelope included; `raw_output` is the payload
alone (what the compressor was given). A message without it was not compressed.
"""

from __future__ import annotations

from typing import Any

from builder.errors import RecordError

RAW_OUTPUT_KEY = "raw_output"


def raw_output_of(raw: dict[str, Any], where: str) -> str | None:
    """The raw tool output a deployed run logged beside this message, or None."""
    value = raw.get(RAW_OUTPUT_KEY)
    extra = raw.get("extra")
    if value is None and isinstance(extra, dict):
        value = extra.get(RAW_OUTPUT_KEY)
    if value is None or isinstance(value, str):
        return value
    raise RecordError(
        f"{where}: {RAW_OUTPUT_KEY} is {type(value).__name__}; a deployed run's raw tool "
        "output must be a string"
    )
