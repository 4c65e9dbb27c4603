"""One published config written from its run table, batch by batch: scrubbed, put in the shape
trainers expect, given provenance and token-length columns, filtered by `max_tokens`, and split
by trajectory."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from builder.errors import PublishError
from builder.publish.card_inputs import ConfigLayout
from builder.publish.folder import parquet_files
from builder.publish.lengths import TRL_DEFAULT_MAX_LENGTH, LengthCounter, length_stats, recommend
from builder.publish.provenance import Provenance, provenance_fields
from builder.publish.shapes import reshape, reshaped_schema
from builder.publish.splits import ID_COLUMN, split_of
from builder.publish.writer import ShardWriter, scrub_batch
from builder.scrub import Scrubber

# Columns whose distinct values the card reports when a table has them.
PROVENANCE_COLUMNS = ("prompt_version", "teacher_model", "agent_model")
# Source columns a config leaves out: dropped before scrubbing (redactions count published text).
UNPUBLISHED = {"prompt_completion": ("messages",)}
# Training configs: their token lengths are counted (and `max_tokens` applies to them).
LENGTH_COLUMNS: dict[str, tuple[str, ...]] = {
    "prompt_completion": ("prompt_length", "completion_length", "sequence_length"),
    "sft": ("prompt_length", "completion_length", "sequence_length"),
    "preferences": ("prompt_length", "chosen_length", "rejected_length", "sequence_length"),
}


@dataclass
class ConfigJob:
    """What every config of one publish shares."""

    staging: Path
    splits: dict[str, float]
    scrubber: Scrubber
    assigned: dict[str, str]  # trajectory -> split, shared so every config agrees
    provenance: Provenance
    counter: LengthCounter
    seed: int = 0
    max_tokens: int | None = None
    max_rows: int = 50_000
    batch_size: int = 1_000


def write_config(config: str, source: Path, job: ConfigJob) -> ConfigLayout:
    files = parquet_files(source)
    try:
        schema = pa.unify_schemas([pq.read_schema(f) for f in files])
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise PublishError(f"{source}: shards have incompatible schemas: {err}") from err
    if ID_COLUMN not in schema.names:
        raise PublishError(f"{source}: no `{ID_COLUMN}` column, cannot split by trajectory")
    schema = schema.remove_metadata()
    published = _published_schema(config, schema, job)
    folder = job.staging / "data" / config
    writers = {s: ShardWriter(folder, s, published, job.max_rows) for s in job.splits}
    values: dict[str, set[str]] = {c: set() for c in PROVENANCE_COLUMNS if c in schema.names}
    dropped = dict.fromkeys(job.splits, 0)
    sequences: dict[str, array[int]] = {s: array("q") for s in job.splits}
    targets: array[int] = array("q")
    for file in files:
        dataset = ds.dataset([str(file)], schema=schema, format="parquet")
        for batch in dataset.to_batches(batch_size=job.batch_size):
            unused = [c for c in UNPUBLISHED.get(config, ()) if c in batch.schema.names]
            batch = job.provenance.add(config, batch.drop_columns(unused), file)
            batch = scrub_batch(batch, job.scrubber)  # provenance text too: nothing unscrubbed
            for column, seen in values.items():
                seen.update(v for v in pc.unique(batch.column(column)).to_pylist() if v)
            ids = batch.column(ID_COLUMN).to_pylist()
            names = [job.assigned.setdefault(i, split_of(i, job.splits, job.seed)) for i in ids]
            shaped = with_lengths(config, reshape(config, batch), job.counter)
            for split in job.splits:
                part = shaped.filter(pa.array([n == split for n in names], type=pa.bool_()))
                part, over = _within(config, part, job.max_tokens)
                dropped[split] += over
                if part.num_rows:
                    writers[split].write(part)
                    if config in LENGTH_COLUMNS:
                        sequences[split].extend(part.column("sequence_length").to_pylist())
                        targets.extend(part.column(LENGTH_COLUMNS[config][1]).to_pylist())
    return _finish(config, published, writers, job, values, dropped, sequences, targets)


def _finish(
    config: str,
    published: pa.Schema,
    writers: dict[str, ShardWriter],
    job: ConfigJob,
    values: dict[str, set[str]],
    dropped: dict[str, int],
    sequences: dict[str, array[int]],
    targets: array[int],
) -> ConfigLayout:
    files_out: dict[str, list[str]] = {}
    rows: dict[str, int] = {}
    num_bytes: dict[str, int] = {}
    for split, writer in writers.items():
        paths = writer.finish()
        if paths:  # a split without rows has no file and is not declared
            files_out[split] = [p.relative_to(job.staging).as_posix() for p in paths]
            rows[split] = writer.total_rows
            num_bytes[split] = writer.total_bytes
    distinct = {c: sorted(v) for c, v in values.items() if v}
    lengths: dict[str, object] = {}
    if config in LENGTH_COLUMNS:
        every = array("q", (n for part in sequences.values() for n in part))
        advice = recommend(every, job.counter.exact)
        lengths = {
            "tokenizer": job.counter.name,
            "exact": job.counter.exact,  # False: an estimate, and max_length has a margin
            "sequence": length_stats(every),
            "completion" if config != "preferences" else "chosen": length_stats(targets),
            "by_split": {s: length_stats(v) for s, v in sequences.items() if v},
            "max_length": advice.max_length if advice else None,
            "filter_above": advice.filter_above if advice else None,
            "rows_over": advice.rows_over if advice else 0,
            "rows_over_trl_default": sum(1 for n in every if n > TRL_DEFAULT_MAX_LENGTH),
            "dropped_by_max_tokens": {s: n for s, n in dropped.items() if n},
        }
    return ConfigLayout(config, published, rows, files_out, num_bytes, distinct, lengths)


def published_names(config: str, schema: pa.Schema) -> list[str]:
    """Every column `write_config` publishes for a table schema, in order (for the docs)."""
    names = reshaped_schema(config, schema).names
    names += [n for n, _ in provenance_fields(config) if n not in names]
    return names + list(LENGTH_COLUMNS.get(config, ()))


def _published_schema(config: str, schema: pa.Schema, job: ConfigJob) -> pa.Schema:
    empty = job.provenance.add(config, pa.RecordBatch.from_pylist([], schema=schema), Path("-"))
    return with_lengths(config, reshape(config, empty), job.counter).schema


def with_lengths(config: str, batch: pa.RecordBatch, counter: LengthCounter) -> pa.RecordBatch:
    """The batch with its token-length columns (training configs only)."""
    names = LENGTH_COLUMNS.get(config)
    if names is None:
        return batch
    counted: list[tuple[int, ...]] = []
    if config == "preferences":
        for prompt, chosen, rejected in zip(
            *(batch.column(c).to_pylist() for c in ("prompt", "chosen", "rejected")), strict=True
        ):
            head, good = counter.lengths(prompt or [], chosen or [])
            _, bad = counter.lengths(prompt or [], rejected or [])
            counted.append((head, good, bad, head + max(good, bad)))
    else:
        for prompt, completion in _pairs(config, batch):
            head, tail = counter.lengths(prompt, completion)
            counted.append((head, tail, head + tail))
    arrays = [pa.array(list(column), pa.int64()) for column in zip(*counted, strict=True)]
    arrays = arrays or [pa.array([], pa.int64()) for _ in names]
    return pa.RecordBatch.from_arrays(
        [*batch.columns, *arrays], names=[*batch.schema.names, *names]
    )


def _pairs(config: str, batch: pa.RecordBatch) -> list[tuple[list, list]]:
    """(prompt turns, completion turns) of each row: `messages` split before the last turn."""
    if config == "prompt_completion":
        prompts = batch.column("prompt").to_pylist()
        completions = batch.column("completion").to_pylist()
        return [(p or [], c or []) for p, c in zip(prompts, completions, strict=True)]
    out = []
    for messages in batch.column("messages").to_pylist():
        turns = messages or []
        out.append((turns[:-1], turns[-1:]))
    return out


def _within(
    config: str, part: pa.RecordBatch, max_tokens: int | None
) -> tuple[pa.RecordBatch, int]:
    """Rows whose whole sequence fits `max_tokens`, and how many did not."""
    if max_tokens is None or config not in LENGTH_COLUMNS or not part.num_rows:
        return part, 0
    kept = part.filter(pc.less_equal(part.column("sequence_length"), max_tokens))
    return kept, part.num_rows - kept.num_rows
