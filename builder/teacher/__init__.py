"""The compressor side: prompt, parsing, validation, rendering, rule candidates, candidate rows.

Everything here is pure (strings and records in, strings and records out); the LLM call that
sits between `prompt.teacher_request` and `candidates.candidates_from_replies` lives in the
orchestration (`builder/nap.py`).
"""

from builder.teacher.output import CompressorOutput, OmittedRange, ParseError

__all__ = ["CompressorOutput", "OmittedRange", "ParseError"]
