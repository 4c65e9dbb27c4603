"""Explicit Arrow schemas and typed records, one module per table.

Every table carries `schema_version` in its Arrow metadata so that readers can refuse
files written by an incompatible builder.
"""

SCHEMA_VERSION = (
    "3"  # 3: steps gained tool_schemas; 2: judgements gained is_control, gate_mode, scores
)
