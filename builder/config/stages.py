"""Config sections of the NAP stages: inputs, eligibility, references, gate and selection
(the model endpoints they call are in `endpoints`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class InputSpec(_Model):
    """One input: a file, folder, glob or Hugging Face Hub dataset id."""

    path: str = Field(
        default="",
        description="File, folder, glob or Hub id (`owner/name`). Relative paths in a config file "
        "are resolved against that file's folder, relative paths given with --set against the "
        "working directory; a relative path that does not exist and looks like `owner/name` is "
        "a Hub id (write `./owner/name` to force a local path). Give this or `hf_dataset`.",
    )
    format: str = Field(
        default="auto", description="Format adapter name, or `auto` to detect per file."
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Adapter options, e.g. the column mapping of a Hugging Face dataset.",
    )
    hf_dataset: str | None = Field(
        default=None,
        description="A Hugging Face dataset, `ID[:SPLIT]`: a Hub id or a local copy (Parquet "
        "files, a `save_to_disk` folder). Sets `path`, `format: hf-dataset` and the options "
        "from `columns` and `preset`, as `nap-builder ingest --hf-dataset` does.",
    )
    columns: dict[str, str] = Field(
        default_factory=dict,
        description="With `hf_dataset`: which column holds what, `{role: column}`; roles: "
        "messages, id, model, resolved, tools, role_key, content_key.",
    )
    preset: str | None = Field(
        default=None,
        description="With `hf_dataset`: the column layout of a known Hub dataset (swe-smith, "
        "swe-rebench-openhands, swe-agent-trajectories, open-swe-traces); by default chosen by "
        "the Hub id, or by the columns of a local copy.",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        """`inputs: [data/]` is shorthand for `inputs: [{path: data/}]`; `hf_dataset` fills
        `path`, `format` and `options`."""
        if isinstance(value, str):
            return {"path": value}
        if isinstance(value, dict) and value.get("hf_dataset"):
            return _hub_input(value)
        if isinstance(value, dict) and not value.get("path"):
            raise ValueError(
                "an input needs `path` (a file, folder, glob or Hub id) or `hf_dataset`"
            )
        return value

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        from builder.ingest.formats import format_names  # imports every adapter: only when checking

        names = format_names()
        if value != "auto" and value not in names:
            raise ValueError(
                f"unknown format; allowed values: 'auto', {', '.join(map(repr, names))}"
            )
        return value


def _hub_input(value: dict[str, Any]) -> dict[str, Any]:
    from builder.errors import ConfigError
    from builder.ingest.hub_inputs import dataset_options, split_ref

    if value.get("path"):
        raise ValueError("give `path` or `hf_dataset`, not both")
    if value.get("format", "hf-dataset") not in ("auto", "hf-dataset"):
        raise ValueError("`hf_dataset` inputs are read with format `hf-dataset`")
    ref, split = split_ref(str(value["hf_dataset"]))
    columns = value.get("columns") or {}
    if not isinstance(columns, dict):
        raise ValueError("`columns` is a mapping {role: column name}")
    try:
        options = dataset_options(ref, split, columns, value.get("preset"))
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return {**value, "path": ref, "format": "hf-dataset",
            "options": {**options, **(value.get("options") or {})}}  # fmt: skip


class ExcludeInstancesConfig(_Model):
    """Decontamination: every trajectory of these task instances is dropped at ingest, before
    any model request, and counted in the report and the card.

    Shorthands: a set name (`exclude_instances: swe-bench-verified`), a file path
    (`exclude_instances: evals/ids.txt`), or a list of set names and ids
    (`exclude_instances: [swe-bench-lite, django__django-10999]`)."""

    sets: list[Literal["swe-bench-verified", "swe-bench-lite"]] = Field(
        default_factory=list,
        description="Named sets shipped with the builder: `swe-bench-verified` (500 ids of the "
        "test split) and `swe-bench-lite` (300); sources in builder/ingest/instance_sets.",
    )
    files: list[str] = Field(
        default_factory=list,
        description="Files of ids: one per line (`#` comments), a JSON list, or JSONL rows with "
        "`instance_id`. Relative paths are resolved like inputs.",
    )
    ids: list[str] = Field(default_factory=list, description="Instance ids, as written.")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        from builder.ingest.instances import NAMED_SETS

        if value is None:
            return {}
        if isinstance(value, str):
            return {"sets": [value]} if value in NAMED_SETS else {"files": [value]}
        if isinstance(value, list):
            sets = [v for v in value if isinstance(v, str) and v in NAMED_SETS]
            return {"sets": sets, "ids": [v for v in value if v not in sets]}
        return value

    @field_validator("files")
    @classmethod
    def _files_exist(cls, files: list[str]) -> list[str]:
        from pathlib import Path

        for name in files:
            if not Path(name).is_file():
                raise ValueError(
                    f"{name!r} is neither a named set (swe-bench-verified, swe-bench-lite) nor a "
                    "file; give ids as a list, e.g. [django__django-10999]"
                )
        return files

    @field_validator("ids")
    @classmethod
    def _plain_ids(cls, ids: list[str]) -> list[str]:
        bad = [i for i in ids if not i.strip() or any(c.isspace() for c in i)]
        if bad:
            raise ValueError(f"instance ids must be non-empty and without spaces: {bad[:3]}")
        return ids

    @property
    def empty(self) -> bool:
        return not (self.sets or self.files or self.ids)

    def resolved(self) -> frozenset[str]:
        """Every id to exclude: the named sets, the files' ids and `ids`."""
        from pathlib import Path

        from builder.ingest.instances import named_set, read_id_file

        found: set[str] = set(self.ids)
        for name in self.sets:
            found |= named_set(name)
        for path in self.files:
            found.update(read_id_file(Path(path)))
        return frozenset(found)


class EligibilityConfig(_Model):
    """Which observations are worth compressing (DESIGN.md, "Eligible observations")."""

    min_tokens: int = Field(
        default=256, ge=0, description="Minimum cl100k tokens of the line-numbered observation."
    )
    require_focus: bool = Field(
        default=False, description="Skip steps whose action carries no context-focus question."
    )
    max_observation_chars: int = Field(
        default=1_000_000,
        ge=1,
        description="Larger observations are skipped (too big for any context).",
    )


class ReferencesConfig(_Model):
    """What "the agent's next action" is compared against."""

    mode: Literal["sampled", "logged"] = Field(
        default="sampled",
        description="`sampled` re-asks the agent on the raw context; `logged` uses the logged "
        "next action (one reference, no requests).",
    )
    samples: int = Field(
        default=8, ge=1, description="Reference samples per step in `sampled` mode."
    )
    temperature: float = Field(
        default=0.7, ge=0.0, le=2.0, description="Temperature of references."
    )


class GateConfig(_Model):
    """The next-action-preservation gate."""

    similarity: Literal["exact", "normalized", "semantic"] = Field(
        default="semantic",
        description="Action similarity: `exact` (same tool and arguments), `normalized` (equal "
        "after whitespace, quoting, flag order, path prefixes, `cd` prefixes and JSON "
        "canonicalisation) or `semantic` (tree-sitter-bash features, field-wise for editor calls).",
    )
    aggregate: Literal["agree", "mean_top_k", "max", "mean"] = Field(
        default="agree",
        description="How similarities to the references become a verdict. `agree`: pass when "
        "at least `min_agree` references are equivalent to the candidate's action "
        "(similarity >= threshold) out of at least `min_references` valid ones; its score is "
        "the share that agree. `mean_top_k`, `max`, `mean`: one averaged score >= threshold "
        "(one matching reference can outvote the rest; kept to compare with earlier runs).",
    )
    top_k: int = Field(default=3, ge=1, description="k of `mean_top_k`.")
    threshold: float = Field(
        default=0.75,
        ge=0.0,
        le=1.0,
        description="θ: a reference is equivalent when its similarity is >= this (`agree`), "
        "or the aggregate must be >= this (other aggregates). With `semantic` only views "
        "(lines of a file or an output) score between 0 and 1: their overlap. 0.75 is the "
        "value `nap-builder calibrate` recommends on the near-miss benchmark.",
    )
    min_agree: int | None = Field(
        default=None,
        ge=1,
        description="`agree`: references that must be equivalent to the candidate's action "
        "(null: 1 with logged references, else 2, so no single sample decides).",
    )
    min_references: int | None = Field(
        default=None,
        ge=1,
        description="`agree`: valid references a step needs to be judged at all; a step with "
        "fewer (format errors) is dropped as `too_few_references` (null: 1 with logged "
        "references, else half of references.samples, rounded up).",
    )
    mode: Literal["generate", "likelihood"] = Field(
        default="generate",
        description="`generate` asks the agent for its action with the candidate in place and "
        "compares it with the references by `similarity`; `likelihood` decodes nothing: the "
        "agent model scores the tokens of each reference action given the candidate and given "
        "the raw context (one prefill each), see `likelihood_score`. Likelihood needs prompt "
        "log-probabilities: the embedded model (`agent.provider: local`) or a vLLM / SGLang "
        "server (`agent.provider: openai` with `base_url` and `likelihood_api`).",
    )
    likelihood_score: Literal["mean", "sum", "grounded"] = Field(
        default="mean",
        description="Likelihood score of one reference, d = (log-probability of its action "
        "tokens with the candidate) - (the same with the raw observation): `mean` per token, "
        "`sum` over the action, `grounded` mean over the action tokens that occur in the raw "
        "observation (falls back to `mean` when none does). Its similarity is min(1, exp(d)).",
    )
    likelihood_threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Likelihood mode: pass when the aggregate of min(1, exp(d)) over the "
        "references is >= this (0.5 with `mean`: at most 0.69 nats per token lost).",
    )
    likelihood_api: Literal["vllm", "sglang"] | None = Field(
        default=None,
        description="How to get prompt log-probabilities from an OpenAI-compatible agent "
        "server: `vllm` (`prompt_logprobs` on /v1/completions) or `sglang` (`return_logprob` "
        "with `logprob_start_len` on /generate). Unused with the embedded model.",
    )
    control: Literal["auto", "judged"] = Field(
        default="auto",
        description="Judge-reliability control: every judged step also judges its raw "
        "observation as an `unchanged` control. `judged` always sends that agent request "
        "(the same request, and cache entry, as an `unchanged` candidate); `auto` instead "
        "reuses reference sample 0, gated against the other references, when that is "
        "equivalent: sampled references with at least 2 samples drawn at the agent's "
        "temperature.",
    )
    control_floor: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Warn loudly when the control's pass rate (how often the agent reproduces "
        "its reference on the raw context) is below this.",
    )


class SelectionConfig(_Model):
    """Which passing candidates become supervision."""

    max_per_step: int = Field(
        default=4, ge=1, description="Shortest passing candidates kept per step."
    )
    fallback: Literal["drop", "unchanged"] = Field(
        default="drop",
        description="When no candidate passes: drop the step, or emit an `unchanged` target.",
    )
    exhaustive: bool = Field(
        default=False,
        description="Judge every candidate; by default judging goes shortest-first and stops "
        "after max_per_step passes (same supervision, fewer agent requests).",
    )
    max_preference_pairs: int | None = Field(
        default=4,
        ge=0,
        description="Preference pairs per step (null: every passing x failing pair).",
    )
