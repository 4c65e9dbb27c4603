"""What every published column means, per config, for the dataset card.

Keyed by the *published* names (after shapes.py). A column missing here is shown on the card
as undocumented rather than left out; tests check that every column of the real table schemas
is documented.
"""

from __future__ import annotations

CONFIG_DESCRIPTIONS = {
    "prompt_completion": "Selected compressor targets as conversational `prompt` (system, user) "
    "and `completion` (assistant): SFT trains on the target only. The default config.",
    "sft": "The same rows as chat `messages` (system, user, assistant); TRL's SFT trains a "
    "`messages` row on the whole sequence.",
    "preferences": "Chosen (passing) vs rejected (failing) compressions of the same step, as "
    "conversational `prompt` / `chosen` / `rejected`, for DPO.",
    "candidates": "Every candidate compression (teacher samples and rule baselines) with its "
    "parse and rendering; not a training config.",
}

_STEP = {
    "trajectory_id": "Stable id of the source trajectory (splits are made by it).",
    "step_index": "Index of the step (tool call + observation) within the trajectory.",
    "prompt_version": "Version of the compressor prompt that produced the input and target.",
    "round": "0: judged with the raw tool outputs earlier in the agent's context (offline); "
    "1, 2, ...: an online round, judged in the context a compressor made (see Rounds).",
    "prefix_mode": "What the agent saw of earlier observations when this was judged: `raw`, "
    "`compressed` (a compressor's outputs) or `deployed` (what a deployed compressor showed).",
}
_SIZES = {
    "raw_chars": "Characters of the raw (line-numbered) observation.",
    "rendered_chars": "Characters of the rendered (compressed) observation.",
    "raw_tokens": "cl100k tokens of the raw observation.",
    "rendered_tokens": "cl100k tokens of the rendered observation.",
}

_PROVENANCE = {
    "instance_id": "Task instance of the source trajectory (e.g. `django__django-10999`) where "
    "its format records one (mini-swe-agent, SWE-agent: the id, else the trajectory file's name; "
    "chat-message rows and Hub datasets; OpenHands evaluation output); null for session logs.",
    "harness": "Agent harness that produced the trajectory.",
    "source_format": "Trajectory format it was read as.",
    "source_file": "Source file, relative to the input it came from (no local folders).",
    "record_index": "Record (line or row) of the trajectory within its source file.",
    "trajectory_model": "Model that ran the logged trajectory, as its file records it.",
    "teacher_model": "Teacher model of the run (a candidate may come from a rule: see `source`).",
    "agent_model": "Agent model whose next action the gate compared.",
    "gate_mode": "How the gate judged: `generate` (the agent's action, compared with the "
    "references) or `likelihood`.",
    "gate_threshold": "The gate's pass threshold for `similarity`.",
}
_LENGTHS = {
    "prompt_length": "Tokens of the prompt turns with the generation prompt (the card names "
    "the tokenizer).",
    "completion_length": "Tokens of the target turn.",
    "sequence_length": "Tokens of prompt and target together: what `max_length` must cover.",
}
_SFT_ROW = {
    "candidate_index": "Index of the selected candidate among the step's candidates "
    "(-1 for an `unchanged` fallback row).",
    "rank": "0 = shortest selected candidate of the step, 1 = next, ...",
    "source": "Where the candidate came from: `teacher`, `rule:<name>` or `fallback`.",
    "system_prompt": "The compressor's instructions (plain text; also the first prompt turn).",
    "user_prompt": "The compressor's input: task, focus question, command and the "
    "line-numbered observation (plain text; also the user turn).",
    "target": "The compressor output as JSON text (`unchanged`, `plain` or `code`; also the "
    "assistant turn).",
    "rendered": "The observation the agent sees once the target is applied.",
    "similarity": "Gate score of the agent's action with this observation against the "
    "reference actions (null for fallback rows).",
    "length_reward": "+0.5 for the step's shortest selected candidate, -0.5 for the longest, "
    "linear between (null for fallback rows).",
    "is_fallback": "True for an `unchanged` row emitted because no candidate passed "
    "(`selection.fallback: unchanged`).",
}

COLUMNS: dict[str, dict[str, str]] = {
    "prompt_completion": {
        "prompt": "Conversational prompt: the compressor's system and user turns.",
        "completion": "One assistant turn: the compressor output (the only tokens SFT trains "
        "on by default).",
        **_STEP,
        **_SFT_ROW,
        **_SIZES,
        **_PROVENANCE,
        "teacher_model": "Model that wrote the candidate (null for rules and fallbacks).",
        **_LENGTHS,
    },
    "sft": {
        **_STEP,
        "candidate_index": "Index of the selected candidate among the step's candidates "
        "(-1 for an `unchanged` fallback row).",
        "rank": "0 = shortest selected candidate of the step, 1 = next, ...",
        "source": "Where the candidate came from: `teacher`, `rule:<name>` or `fallback`.",
        "system_prompt": "The compressor's instructions (plain text; also `messages[0]`).",
        "user_prompt": "The compressor's input: task, focus question, command and the "
        "line-numbered observation (plain text; also `messages[1]`).",
        "target": "The compressor output as JSON text (`unchanged`, `plain` or `code`; also "
        "`messages[2]`).",
        "messages": "Chat turns system, user, assistant: the training example in TRL's "
        "conversational language-modelling format.",
        "rendered": "The observation the agent sees once the target is applied.",
        **_SIZES,
        "similarity": "Gate score of the agent's action with this observation against the "
        "reference actions (null for fallback rows).",
        "length_reward": "+0.5 for the step's shortest selected candidate, -0.5 for the longest, "
        "linear between (null for fallback rows).",
        "is_fallback": "True for an `unchanged` row emitted because no candidate passed "
        "(`selection.fallback: unchanged`).",
        **_PROVENANCE,
        "teacher_model": "Model that wrote the candidate (null for rules and fallbacks).",
        **_LENGTHS,
    },
    "preferences": {
        "prompt": "Conversational prompt: the compressor's system and user turns.",
        "chosen": "One assistant turn: a candidate that passed the gate.",
        "rejected": "One assistant turn: a judged candidate of the same step that failed.",
        **_STEP,
        "chosen_candidate_index": "Candidate index of the chosen compression.",
        "rejected_candidate_index": "Candidate index of the rejected compression.",
        "system_prompt": "The compressor's instructions (plain text of `prompt[0]`).",
        "user_prompt": "The compressor's input (plain text of the user turn of `prompt`).",
        "chosen_target": "The chosen compressor output as JSON text.",
        "rejected_target": "The rejected compressor output as JSON text.",
        "chosen_similarity": "Gate score of the chosen candidate.",
        "rejected_similarity": "Gate score of the rejected candidate.",
        **_PROVENANCE,
        "prompt_length": _LENGTHS["prompt_length"],
        "chosen_length": "Tokens of the chosen turn.",
        "rejected_length": "Tokens of the rejected turn.",
        "sequence_length": "Tokens of the prompt with the longer of the two turns: what "
        "`max_length` must cover.",
    },
    "candidates": {
        **_STEP,
        "candidate_index": "Index of the candidate within the step.",
        "source": "`teacher` or `rule:<name>`.",
        "reply": "The raw text the source produced.",
        "kind": "`unchanged`, `plain` or `code`; null when the reply did not parse.",
        "output": "Canonical JSON of the parsed compressor output.",
        "valid": "The reply parsed, its ranges were valid and the render was not longer than "
        "the raw observation.",
        "invalid_reason": "Why an invalid candidate is invalid (`invalid_json`, `bad_ranges`, "
        "`too_long`, `duplicate`, ...).",
        "duplicate_of": "candidate_index of the first candidate with the identical render.",
        "rendered": "The observation the agent would see with this candidate.",
        **_SIZES,
        **_PROVENANCE,
        "teacher_model": "Model that wrote the candidate (null for rules).",
        "similarity": "Gate score of the agent's action with this candidate (null: not judged, "
        "e.g. after enough shorter candidates passed).",
        "passed": "Whether the candidate passed the gate (null: not judged).",
    },
}
UNDOCUMENTED = "(not documented)"


def column_doc(config: str, column: str) -> str:
    """The meaning of `column` in `config`, or UNDOCUMENTED."""
    return COLUMNS.get(config, {}).get(column, UNDOCUMENTED)
