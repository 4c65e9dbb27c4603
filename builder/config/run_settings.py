"""Config sections of a run around the stages: limits, prices, cache, output, publish, scrub,
execution."""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from builder.config.stages import _Model


class LimitsConfig(_Model):
    """Request scheduling and spending limits."""

    concurrency: int = Field(default=8, ge=1, description="Requests in flight at once.")
    steps_in_flight: int | None = Field(
        default=None,
        ge=1,
        description="Steps processed at once (null: as many as keep `concurrency` busy). Set 1 "
        "for a single local model, so the requests of one step run back to back and reuse "
        "its prompt cache instead of evicting each other.",
    )
    requests_per_minute: int | None = Field(
        default=None, ge=1, description="Rate limit (null: none)."
    )
    tokens_per_minute: int | None = Field(
        default=None, ge=1, description="Token rate limit (null: none)."
    )
    budget_usd: float | None = Field(
        default=None,
        ge=0,
        description="Total USD for the output folder, across invocations and resumes: each "
        "request reserves its worst case before it is sent and no request is sent that could "
        "pass it (null: none). Raise it with --set to resume.",
    )
    budget_tokens: int | None = Field(
        default=None, ge=0, description="Same as budget_usd, in prompt + completion tokens."
    )
    batch_poll_s: float = Field(
        default=30.0,
        gt=0,
        description="First wait between polls of open batch jobs; it grows 1.5x per poll.",
    )
    batch_poll_max_s: float = Field(
        default=600.0, gt=0, description="Longest wait between polls of open batch jobs."
    )
    timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Deadline of one HTTP request, in seconds, from send to the last byte.",
    )
    max_retries: int = Field(
        default=5, ge=0, description="Retries of a transient error (429, 5xx)."
    )
    max_retry_after_s: float = Field(
        default=60.0,
        ge=0,
        description="Longest Retry-After honoured, in seconds; longer hints are cut to this "
        "(retries are jittered up to 50% above the hint).",
    )


class Price(_Model):
    """USD per million tokens."""

    input: float = Field(ge=0, description="Price of a million uncached prompt tokens.")
    cached_input: float | None = Field(
        default=None,
        ge=0,
        description="Price of a million cached prompt tokens (null: same as input).",
    )
    output: float = Field(ge=0, description="Price of a million completion tokens.")
    cache_write: float | None = Field(
        default=None,
        ge=0,
        description="Price of a million prompt tokens written to a 5-minute prompt cache "
        "(Anthropic; null: 1.25 x input).",
    )
    cache_write_1h: float | None = Field(
        default=None,
        ge=0,
        description="Price of a million prompt tokens written to a 1-hour prompt cache "
        "(Anthropic; null: 2 x input).",
    )

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float:
        """USD for one request; `cached_tokens` is the cached part of `prompt_tokens`."""
        cached_price = self.input if self.cached_input is None else self.cached_input
        uncached = max(prompt_tokens - cached_tokens, 0)
        total = uncached * self.input + cached_tokens * cached_price
        return (total + completion_tokens * self.output) / 1_000_000


class CacheConfig(_Model):
    """The request cache that makes reruns and resumes free."""

    enabled: bool = Field(
        default=True, description="Cache every model request by its full content."
    )
    dir: str | None = Field(
        default=None,
        description="Cache folder; null means OUT/cache so that a run folder is self-contained. "
        "Point several runs at one folder to share answers. Always local (SQLite needs file "
        "locks): with an object-store output.dir, null means the local mirror's cache/.",
    )


class OutputConfig(_Model):
    """Where and how the tables are written."""

    dir: str = Field(
        default="out",
        description="Output folder (OUT); relative to the config file when set there. A "
        "file:// URI is a local path; an object-store URI (s3://bucket/run, gs://bucket/run; "
        "credentials from the environment) runs on a local mirror that is uploaded as it "
        "goes: each file one whole-object PUT, shard markers after their tables (README, "
        "'Outputs on object stores').",
    )
    local_dir: str | None = Field(
        default=None,
        description="Local mirror of an object-store output.dir (tables are written here "
        "first; the request cache and batch ledger stay here, never on the store); null "
        "means ~/.cache/nap-builder/runs/<hash of the URI> (NAP_BUILDER_CACHE overrides the "
        "root). Ignored for a local output.dir.",
    )
    shard_size: int = Field(
        default=16, ge=1, description="Trajectories per shard (the unit of resume)."
    )
    progress: bool = Field(
        default=True,
        description="Show the progress bar and status line (only when stderr is a terminal).",
    )
    log_every_s: float = Field(
        default=30.0,
        gt=0,
        description="Without a terminal (or with progress off), write the progress figures "
        "to the log this often, in seconds.",
    )


class PublishConfig(_Model):
    """The Hugging Face dataset layout and upload."""

    repo: str | None = Field(
        default=None, pattern=r"^[\w.-]+/[\w.-]+$", description="Hub dataset repo `org/name`."
    )
    private: bool | None = Field(
        default=None,
        description="Visibility wish for the Hub repo: true private, false public, null (default) "
        "a new repo is private and an existing one keeps its visibility. A wish that differs "
        "from an existing repo only warns; `publish --private/--public` changes it.",
    )
    splits: dict[str, float] = Field(
        default_factory=lambda: {"train": 0.9, "validation": 0.05, "test": 0.05},
        description="Split name -> fraction of trajectories (made by trajectory, deterministic).",
    )
    license: str = Field(
        default="unknown",
        description="Hub licence id for the dataset card (mind the inputs' licences); `other` "
        "needs license_name and license_link.",
    )
    license_name: str | None = Field(
        default=None, description="Slug of a licence not on the Hub's list (with license: other)."
    )
    license_link: str | None = Field(
        default=None, description="URL or repo file of that licence text (with license: other)."
    )
    input_licenses: dict[str, str] = Field(
        default_factory=dict,
        description="Licence of each input, keyed by its path or Hub id as written in `inputs`, "
        "shown on the card (licences of Hub datasets and folders with a LICENSE file or a "
        "dataset README are found without it).",
    )

    tokenizer: str | None = Field(
        default=None,
        description="A Hugging Face tokenizer (local folder, or a name already in the local "
        "cache: nothing is downloaded) whose chat template counts the card's token lengths, "
        "as TRL would; null: cl100k tokens of ChatML-rendered turns, an estimate.",
    )
    max_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Leave out training rows (prompt_completion, sft, preferences) whose whole "
        "sequence is longer than this many tokens; the card and the output count them per "
        "split. Null: keep every row.",
    )
    min_train_fraction: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Warn when `train` holds less than this share of the rows.",
    )
    min_split_trajectories: int = Field(
        default=5,
        ge=0,
        description="Warn when a split with a fraction above 0 gets fewer trajectories.",
    )

    @field_validator("splits")
    @classmethod
    def _fractions(cls, splits: dict[str, float]) -> dict[str, float]:
        if not splits:
            raise ValueError("at least one split is needed")
        for name, fraction in splits.items():
            if not re.fullmatch(r"\w+", name):
                raise ValueError(f"split name {name!r} must be letters, digits or _")
            if fraction < 0:
                raise ValueError(f"split {name!r} has a negative fraction")
        if not math.isclose(sum(splits.values()), 1.0, abs_tol=1e-6):
            raise ValueError(f"split fractions must sum to 1, got {sum(splits.values()):g}")
        return splits

    @model_validator(mode="after")
    def _licence(self) -> PublishConfig:
        from builder.publish.licences import HUB_LICENSES

        if self.license not in HUB_LICENSES:
            raise ValueError(
                f"license {self.license!r} is not a Hub licence id (e.g. mit, apache-2.0, "
                "cc-by-4.0, unknown, other)"
            )
        if self.license == "other" and not (self.license_name and self.license_link):
            raise ValueError("license `other` needs license_name and license_link")
        return self


class ScrubConfig(_Model):
    """Secret redaction before remote requests and before publishing."""

    enabled: bool = Field(default=True, description="Redact credentials (keys, tokens, passwords).")
    emails: bool = Field(default=False, description="Also redact email addresses.")
    raw_tables: bool = Field(
        default=False,
        description="Keep the raw text in the run folder's `trajectories` and `steps` tables "
        "(and mirror them so to an object store); each shard is then scrubbed when it is "
        "loaded, so requests are still redacted. Off: the ingest writes the tables scrubbed.",
    )


class ExecutionConfig(_Model):
    """Which engine runs the stages; it changes no output row, so it is not in the hash."""

    engine: Literal["local", "ray"] = Field(
        default="local",
        description="`local` runs every stage in this process (ingest in a process pool); "
        "`ray` runs ingest and shards on a pool of Ray actors holding the LLM "
        "clients, with limits and budget owned by one coordinator actor (pip install "
        "nap-builder[ray]).",
    )
    ray_address: str | None = Field(
        default=None,
        description="Ray cluster to connect to (`auto`, `ray://host:10001`, `host:6379`); null "
        "uses RAY_ADDRESS when set, else starts a local Ray on this machine.",
    )
    actors: int = Field(
        default=2,
        ge=1,
        description="Shard worker actors. Each holds its own clients; limits.concurrency stays "
        "the cluster-wide bound, so size this to keep it busy, not beyond.",
    )
    shards_per_actor: int | None = Field(
        default=None,
        ge=1,
        description="Shards one actor processes at once on its event loop (null: the local "
        "engine's shards in flight, enough to keep limits.concurrency busy, split over the "
        "actors).",
    )
    actor_cpus: float = Field(
        default=1.0,
        gt=0,
        description="CPUs reserved per actor (its CPU work is loading and scrubbing a shard; "
        "the rest is waiting on requests, so fractions pack more actors on a node).",
    )
    num_cpus: int | None = Field(
        default=None,
        ge=1,
        description="CPUs of a local Ray started by the run (null: all of this machine's).",
    )
    lease_s: float | None = Field(
        default=None,
        gt=0,
        description="A request slot held by a worker that died is reclaimed after this many "
        "seconds (null: limits.timeout_s + 10, longer than any live request).",
    )
