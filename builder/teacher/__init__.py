"""The compressor side: prompt, parsing, validation, rendering, rule candidates, candidate rows.

Everything here is pure (strings and records in, strings and records out); the LLM call that
sits between `prompt.teacher_request` and `candidates.candidates_from_replies` lives in the
orchestration (`builder/nap/step.py`).

Reads: a step's observation and action. Writes: rows of `candidates`.
Entry point: `builder.teacher.candidates.build_candidates`.
"""

from builder.teacher.output import CompressorOutput, OmittedRange, ParseError

__all__ = ["CompressorOutput", "OmittedRange", "ParseError"]
