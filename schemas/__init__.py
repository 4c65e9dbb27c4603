"""Explicit Arrow schemas and typed records, one module per table.

Every table carries `schema_version` in its Arrow metadata so that readers can refuse
files written by an incompatible builder.
"""

SCHEMA_VERSION = "4"
"""4: messages gained raw_output and steps deployed_observation (deployed runs); every NAP row
gained round and prefix_mode; new tables prefixes and round_steps. 3: steps gained
tool_schemas. 2: judgements gained is_control, gate_mode, scores."""
