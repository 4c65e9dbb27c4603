"""Token lengths of the training configs as a trainer sees them, and a `max_length` covering them.

TRL's SFT and DPO configs default to `max_length=1024` and keep the start of a longer sequence,
so a compressor target (which comes last) is cut off whenever prompt + target is longer: the
card must give a `max_length` that covers the data. Lengths are counted either with a given
Hugging Face tokenizer and its chat template, the way TRL does it (the prompt rendered with the
generation prompt, the completion starting where it and the whole conversation diverge), or,
without one, as cl100k tokens of the turns in ChatML form: an estimate of a model's own count,
so the recommendation adds a margin.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from builder.errors import PublishError

Turns = list[dict[str, str]]
LONG_CONTEXT = 32_768  # above this a covering max_length is not recommended; longer rows filtered
ESTIMATE_MARGIN = 1.25  # cl100k is not the model's tokenizer: code tokenizes +-20% across models
ROUND_TO = 64
TRL_DEFAULT_MAX_LENGTH = 1024  # SFTConfig and DPOConfig in TRL 1.x, keeping the start


class LengthCounter:
    """(prompt, completion) tokens of one conversational example."""

    name = ""
    exact = False

    def __init__(self) -> None:
        self._prompts: dict[bytes, int] = {}

    def lengths(self, prompt: Turns, completion: Turns) -> tuple[int, int]:
        raise NotImplementedError

    def _memo(self, prompt: Turns, count: Any) -> int:
        """The same prompt is in three configs: count it once (bounded memo)."""
        key = hashlib.sha1(repr(prompt).encode()).digest()
        found = self._prompts.get(key)
        if found is None:
            if len(self._prompts) > 4096:
                self._prompts.clear()
            found = self._prompts[key] = count()
        return found


class ChatMLEstimate(LengthCounter):
    """cl100k tokens of `<|im_start|>role\\ncontent<|im_end|>\\n` turns (no model's template)."""

    name = "cl100k_base over ChatML-rendered turns (an estimate)"

    def lengths(self, prompt: Turns, completion: Turns) -> tuple[int, int]:
        from builder.steps.tokens import count_tokens

        head = self._memo(prompt, lambda: count_tokens(_chatml(prompt) + "<|im_start|>assistant\n"))
        tail = count_tokens("".join(t["content"] + "<|im_end|>\n" for t in completion))
        return head, tail


class TemplateCounter(LengthCounter):
    """A Hugging Face tokenizer with its chat template, read from local files only."""

    exact = True

    def __init__(self, name: str) -> None:
        super().__init__()
        try:
            from transformers import AutoTokenizer
        except ImportError:
            raise PublishError(
                "publish --tokenizer needs the `transformers` package (pip install "
                "transformers); without a tokenizer the lengths are a cl100k estimate"
            ) from None

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise PublishError(
                f"publish tokenizer {name!r}: cannot load it from local files ({exc}); give a "
                "folder with tokenizer files or a name already in the Hugging Face cache"
            ) from None
        if not getattr(self.tokenizer, "chat_template", None):
            raise PublishError(f"publish tokenizer {name!r} has no chat template")
        self.name = f"{name} with its chat template"

    def lengths(self, prompt: Turns, completion: Turns) -> tuple[int, int]:
        def ids(turns: Turns, generation: bool) -> list[int]:
            out: Any = self.tokenizer.apply_chat_template(
                turns, tokenize=True, add_generation_prompt=generation, return_dict=True
            )
            return list(out["input_ids"])

        whole = ids(prompt + completion, False)
        head = _common_prefix(ids(prompt, True), whole)
        return head, len(whole) - head


def make_counter(tokenizer: str | None) -> LengthCounter:
    return TemplateCounter(tokenizer) if tokenizer else ChatMLEstimate()


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The `max_length` of the card's snippets, and the rows it leaves out (filtered first)."""

    max_length: int
    filter_above: int | None  # counted tokens; None: every row fits
    rows_over: int


def recommend(lengths: Sequence[int], exact: bool) -> Recommendation | None:
    """Covering max_length (rounded up to a multiple of 64, with the estimate's margin); above
    LONG_CONTEXT, the 99th percentile instead, and the longer rows to filter."""
    if not lengths:
        return None
    margin = 1.0 if exact else ESTIMATE_MARGIN
    covering = _round_up(max(lengths) * margin)
    if covering <= LONG_CONTEXT:
        return Recommendation(covering, None, 0)
    limit = min(LONG_CONTEXT, _round_up(percentile(lengths, 99) * margin))
    keep = int(limit / margin)
    return Recommendation(limit, keep, sum(1 for n in lengths if n > keep))


def percentile(values: Sequence[int], q: float) -> int:
    """Nearest-rank percentile (an observed length, never an interpolation)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def length_stats(values: Sequence[int]) -> dict[str, int]:
    if not values:
        return {"rows": 0}
    return {
        "rows": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
        "max": max(values),
    }


def _round_up(value: float) -> int:
    return int(math.ceil(value / ROUND_TO) * ROUND_TO)


def _chatml(turns: Turns) -> str:
    return "".join(f"<|im_start|>{t['role']}\n{t['content']}<|im_end|>\n" for t in turns)


def _common_prefix(ids: list[int], other: list[int]) -> int:
    """As TRL's `common_prefix_length`: a template may render the prompt alone differently."""
    length = 0
    for a, b in zip(ids, other, strict=False):
        if a != b:
            break
        length += 1
    return length
