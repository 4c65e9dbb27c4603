"""Can a trajectory be written? A type check against the Arrow schema, before the writer.

Arrow converts a whole buffer of records at once, so one record with a float where a string
belongs (a hostile `model` field) or a count past int64 would fail the shard of a whole task.
Adapters coerce what they read; this check is the net under them: such a record becomes one
quarantine row naming the field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from schemas.trajectories import MESSAGE_TYPE, TOOL_CALL_TYPE, TRAJECTORY_SCHEMA, TrajectoryRecord

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FLOAT_MAX = 1.7976931348623157e308


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and (
        INT64_MIN <= value <= INT64_MAX
    )  # fmt: skip


def _is_float(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, float) or abs(value) <= FLOAT_MAX


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _anything(value: Any) -> bool:
    return True


def _check_for(kind: pa.DataType) -> Callable[[Any], bool]:
    if pa.types.is_string(kind):
        return _is_str
    if pa.types.is_boolean(kind):
        return _is_bool
    if pa.types.is_integer(kind):
        return _is_int
    if pa.types.is_floating(kind):
        return _is_float
    return _anything


Plan = tuple[tuple[str, Callable[[Any], bool]], ...]


def _plan(struct: pa.StructType | pa.Schema, skip: tuple[str, ...] = ()) -> Plan:
    """(field, check) per field, decided once per struct: asking Arrow for each value's type
    class per record was most of this check's cost."""
    return tuple((f.name, _check_for(f.type)) for f in struct if f.name not in skip)


TOP_PLAN = _plan(TRAJECTORY_SCHEMA, skip=("messages",))
MESSAGE_PLAN = _plan(MESSAGE_TYPE, skip=("tool_calls",))
TOOL_CALL_PLAN = _plan(TOOL_CALL_TYPE)


def _first_misfit(record: Any, plan: Plan) -> str | None:
    for name, check in plan:
        value = getattr(record, name)
        if value is not None and not check(value):
            return name
    return None


def misfit(record: TrajectoryRecord) -> str | None:
    """The first field (`messages[3].content` style) Arrow would refuse, or None."""
    name = _first_misfit(record, TOP_PLAN)
    if name is not None:
        return name
    if not isinstance(record.messages, list):
        return "messages"
    for i, message in enumerate(record.messages):
        name = _first_misfit(message, MESSAGE_PLAN)
        if name is not None:
            return f"messages[{i}].{name}"
        for j, call in enumerate(message.tool_calls):
            name = _first_misfit(call, TOOL_CALL_PLAN)
            if name is not None:
                return f"messages[{i}].tool_calls[{j}].{name}"
    return None
