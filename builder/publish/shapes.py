"""Published configs in the shapes trainers expect (TRL's conversational formats).

TRL decides how to read a row from its column names: a `prompt` key means prompt-completion
(or preference with `chosen`/`rejected`), `messages` means language modelling, and
`is_conversational` looks at *one* of those keys picked by `set.pop()`, so a row holding both
a plain-string `prompt` and conversational `messages` is read differently from run to run.
The published configs therefore hold exactly the keys of one TRL format, conversational, and
keep the plain texts under names no trainer reads:

- `prompt_completion` (the default config): `prompt` = [system, user], `completion` =
  [assistant], from the `supervision` rows; TRL's SFT then puts the loss on the completion
  alone (`completion_only_loss` defaults to it for prompt-completion data). The plain texts
  become `system_prompt` and `user_prompt`; `target` stays; `messages` is left out.
- `sft`: `messages` (system, user, assistant); `system` → `system_prompt`, `prompt` →
  `user_prompt`; `target` stays. TRL trains a `messages` row on the whole sequence.
- `preferences`: `prompt` = [system, user], `chosen` = [assistant], `rejected` = [assistant],
  so DPO sees the compressor's instructions SFT saw; the plain texts become `system_prompt`,
  `user_prompt`, `chosen_target`, `rejected_target`.
- `candidates`: not a training config; `prompt` (if any) is renamed the same way.

Reshaping runs after scrubbing, on scrubbed text, so redaction counts stay per source column.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from builder.errors import PublishError

# Keys TRL's data utilities read as data (trl.data_utils.apply_chat_template's supported keys).
TRAINER_KEYS = frozenset(
    {"prompt", "completion", "chosen", "rejected", "messages", "label", "text"}
)
MESSAGE_TYPE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])
MESSAGES_TYPE = pa.list_(MESSAGE_TYPE)
PLAIN_NAMES = {
    "system": "system_prompt",
    "prompt": "user_prompt",
    "chosen": "chosen_target",
    "rejected": "rejected_target",
}
# The trainer keys each config may publish.
ALLOWED_KEYS: dict[str, frozenset[str]] = {
    "prompt_completion": frozenset({"prompt", "completion"}),
    "sft": frozenset({"messages"}),
    "preferences": frozenset({"prompt", "chosen", "rejected"}),
    "candidates": frozenset(),
}


def reshape_prompt_completion(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Conversational `prompt` (system, user) and `completion` (assistant), then the plain
    columns renamed; `messages` (the same turns) is dropped so TRL reads one format."""
    names = batch.schema.names
    if "prompt" not in names or "target" not in names:
        raise PublishError("supervision table has no prompt or target column")
    system = batch.column("system").to_pylist() if "system" in names else [None] * len(batch)
    users = batch.column("prompt").to_pylist()
    prompts = [_prompt_turns(s, u) for s, u in zip(system, users, strict=True)]
    turns = {
        "prompt": pa.array(prompts, type=MESSAGES_TYPE),
        "completion": _assistant_turns(batch.column("target").to_pylist()),
    }
    plain = _renamed(batch.drop_columns(["messages"]) if "messages" in names else batch,
                     ("system", "prompt"))  # fmt: skip
    arrays = list(turns.values()) + list(plain.columns)
    return pa.RecordBatch.from_arrays(arrays, names=list(turns) + plain.schema.names)


def reshape_sft(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Keep `messages`; rename the plain `system` and `prompt` columns."""
    return _renamed(batch, ("system", "prompt"))


def reshape_preferences(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Conversational `prompt`/`chosen`/`rejected` first, then the renamed plain columns."""
    names = batch.schema.names
    missing = [c for c in ("prompt", "chosen", "rejected") if c not in names]
    if missing:
        raise PublishError(f"preferences table has no {', '.join(missing)} column")
    system = batch.column("system").to_pylist() if "system" in names else [None] * len(batch)
    users = batch.column("prompt").to_pylist()
    prompts = [_prompt_turns(s, u) for s, u in zip(system, users, strict=True)]
    turns = {
        "prompt": pa.array(prompts, type=MESSAGES_TYPE),
        "chosen": _assistant_turns(batch.column("chosen").to_pylist()),
        "rejected": _assistant_turns(batch.column("rejected").to_pylist()),
    }
    plain = _renamed(batch, ("system", "prompt", "chosen", "rejected"))
    arrays = list(turns.values()) + list(plain.columns)
    return pa.RecordBatch.from_arrays(arrays, names=list(turns) + plain.schema.names)


def reshape_candidates(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Not trained on directly; only keep trainer keys out of it."""
    return _renamed(batch, ("system", "prompt", "chosen", "rejected"))


RESHAPERS: dict[str, Callable[[pa.RecordBatch], pa.RecordBatch]] = {
    "prompt_completion": reshape_prompt_completion,
    "sft": reshape_sft,
    "preferences": reshape_preferences,
    "candidates": reshape_candidates,
}


def reshape(config: str, batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch in its published shape; a trainer key that does not belong there is an error."""
    shaped = RESHAPERS.get(config, lambda b: b)(batch)
    extra = sorted(TRAINER_KEYS & set(shaped.schema.names) - ALLOWED_KEYS.get(config, frozenset()))
    if extra:
        raise PublishError(
            f"config {config!r}: column(s) {', '.join(extra)} would be read as training data by "
            "TRL; rename them in the table"
        )
    return shaped


def reshaped_schema(config: str, schema: pa.Schema) -> pa.Schema:
    """The published schema of a table schema (reshaping an empty batch)."""
    empty = pa.RecordBatch.from_pylist([], schema=schema)
    return reshape(config, empty).schema


def _renamed(batch: pa.RecordBatch, columns: tuple[str, ...]) -> pa.RecordBatch:
    names = [PLAIN_NAMES[n] if n in columns else n for n in batch.schema.names]
    clash = {n for n in names if names.count(n) > 1}
    if clash:
        raise PublishError(f"cannot rename plain-text columns: {', '.join(sorted(clash))} twice")
    return pa.RecordBatch.from_arrays(list(batch.columns), names=names)


def _prompt_turns(system: str | None, user: str | None) -> list[dict[str, str]]:
    turns = [{"role": "system", "content": system}] if system else []
    return [*turns, {"role": "user", "content": user or ""}]


def _assistant_turns(texts: list[str | None]) -> pa.Array:
    return pa.array([[{"role": "assistant", "content": t or ""}] for t in texts], MESSAGES_TYPE)
