"""Can a trajectory be written? A type check against the Arrow schema, before the writer.

Arrow converts a whole buffer of records at once, so one record with a float where a string
belongs (a hostile `model` field) or a count past int64 would fail the shard of a whole task.
Adapters coerce what they read; this check is the net under them: such a record becomes one
quarantine row naming the field.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from schemas.trajectories import MESSAGE_TYPE, TOOL_CALL_TYPE, TRAJECTORY_SCHEMA, TrajectoryRecord

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FLOAT_MAX = 1.7976931348623157e308


def fits(value: Any, kind: pa.DataType) -> bool:
    """Whether a scalar Python value converts to the Arrow type (None always does)."""
    if value is None:
        return True
    if pa.types.is_string(kind):
        return isinstance(value, str)
    if pa.types.is_boolean(kind):
        return isinstance(value, bool)
    if pa.types.is_integer(kind):
        return isinstance(value, int) and not isinstance(value, bool) and (
            INT64_MIN <= value <= INT64_MAX
        )  # fmt: skip
    if pa.types.is_floating(kind):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return isinstance(value, float) or abs(value) <= FLOAT_MAX
    return True


def _first_misfit(record: Any, struct: pa.StructType, skip: tuple[str, ...] = ()) -> str | None:
    for field in struct:
        if field.name in skip:
            continue
        if not fits(getattr(record, field.name), field.type):
            return field.name
    return None


def misfit(record: TrajectoryRecord) -> str | None:
    """The first field (`messages[3].content` style) Arrow would refuse, or None."""
    top = pa.struct(list(TRAJECTORY_SCHEMA))
    name = _first_misfit(record, top, skip=("messages",))
    if name is not None:
        return name
    if not isinstance(record.messages, list):
        return "messages"
    for i, message in enumerate(record.messages):
        name = _first_misfit(message, MESSAGE_TYPE, skip=("tool_calls",))
        if name is not None:
            return f"messages[{i}].{name}"
        for j, call in enumerate(message.tool_calls):
            name = _first_misfit(call, TOOL_CALL_TYPE)
            if name is not None:
                return f"messages[{i}].tool_calls[{j}].{name}"
    return None
