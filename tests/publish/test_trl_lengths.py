"""The published `prompt_completion` config through TRL's own SFT data preparation, with the
`max_length` (and row filter) the card gives: every target token is inside `max_length` and
carries loss, and no prompt token does.

TRL's `SFTTrainer` imports torch, which is not installed here, so its preparation
(trl/trainer/sft_trainer.py, `_prepare_dataset` in TRL 1.16: the prompt-completion branch of
`tokenize_fn`, `build_labels` with `completion_only_loss` on, its default for prompt-completion
data, and the `keep_start` truncation) is reproduced step for step around TRL's own
`trl.data_utils` functions (`is_conversational`, `_tokenize`, `common_prefix_length`). The
tokenizer is trained here, offline, on the run's own texts, with a chat template.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from builder.cli import main
from tests.paths import SHARED
from tests.run.nap_server import nap_server, run_config

pytest.importorskip("trl.data_utils", reason="trl (pip install --no-deps trl) is a dev dependency")
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
SPECIAL = ["[UNK]", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>"]
TRL_DEFAULT = 1024


def _train_tokenizer(texts: list[str], folder: Path) -> Any:
    """A small BPE tokenizer learned from the data, saved as a Hugging Face tokenizer folder."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE(unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=600, special_tokens=SPECIAL))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", eos_token="<|end|>", pad_token="<|end|>"
    )
    tokenizer.chat_template = TEMPLATE
    tokenizer.save_pretrained(folder)
    return tokenizer


def _sft_prepare(example: dict[str, Any], tokenizer: Any, max_length: int) -> dict[str, Any]:
    """TRL 1.16 `SFTTrainer._prepare_dataset` on one prompt-completion row (see module doc)."""
    from trl.data_utils import _tokenize, common_prefix_length, is_conversational

    assert "prompt" in example and is_conversational(example)
    prompt_ids = _tokenize(tokenizer, example["prompt"], add_generation_prompt=True)["input_ids"]
    full = _tokenize(tokenizer, example["prompt"] + example["completion"])["input_ids"]
    prompt_len = common_prefix_length(prompt_ids, full)
    completion_mask = [0] * prompt_len + [1] * (len(full) - prompt_len)
    labels = [t if m else -100 for t, m in zip(full, completion_mask, strict=True)]
    return {
        "input_ids": full[:max_length],
        "labels": labels[:max_length],  # truncation_mode="keep_start"
        "prompt_len": prompt_len,
        "untruncated": len(full),
    }


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A run over every real trajectory format, published with a tokenizer trained on it."""
    import polars as pl

    root = tmp_path_factory.mktemp("trl")
    out = root / "out"
    with nap_server() as server:
        config = root / "run.yaml"
        config.write_text(run_config(SHARED, server.base_url, out))
        assert main(["run", str(config)]) == 0
    sup = pl.read_parquet(out / "supervision" / "*.parquet")
    texts = [*sup["system"].to_list(), *sup["prompt"].to_list(), *sup["target"].to_list()]
    tokenizer = _train_tokenizer(texts, root / "tokenizer")
    dest = root / "dataset"
    argv = ["publish", str(out), "--to", str(dest), "--tokenizer", str(root / "tokenizer")]
    assert main(argv) == 0
    card = (dest / "README.md").read_text()
    return {"dest": dest, "tokenizer": tokenizer, "card": card, "cache": str(root / "hf-cache")}


def _card_settings(card: str, trainer: str) -> tuple[int, int | None]:
    """`max_length` of a snippet, and its row filter (`sequence_length <= N`) if any."""
    block = card.split("```python\nfrom datasets import load_dataset\nfrom trl", 1)[1]
    part = block.split(f"{trainer}(", 1)[0].rsplit("load_dataset(", 1)[1]
    config = block.split(f"{trainer}(", 1)[1].split("\n", 2)[:2]
    length = re.search(r"max_length=(\d+)", "\n".join(config))
    limit = re.search(r'row\["sequence_length"\] <= (\d+)', part)
    assert length, config
    return int(length.group(1)), int(limit.group(1)) if limit else None


def test_every_target_token_is_inside_max_length_and_carries_loss(published: dict) -> None:
    from datasets import load_dataset

    tokenizer, card = published["tokenizer"], published["card"]
    max_length, limit = _card_settings(card, "SFTTrainer")
    rows = load_dataset(  # a cache of its own: an earlier folder's rows are never reused
        str(published["dest"]), "prompt_completion", split="train", cache_dir=published["cache"]
    )
    if limit is not None:  # as the card's snippet does
        rows = rows.filter(lambda row: row["sequence_length"] <= limit)
    assert len(rows) > 0
    cut_by_default = 0
    for row in rows:
        prepared = _sft_prepare(row, tokenizer, max_length)
        ids, labels, prompt_len = prepared["input_ids"], prepared["labels"], prepared["prompt_len"]
        assert prepared["untruncated"] <= max_length  # nothing cut: the target is all there
        assert all(label == -100 for label in labels[:prompt_len])  # no loss on the prompt
        assert labels[prompt_len:] == ids[prompt_len:] and len(ids) > prompt_len  # all on target
        target = len(ids) - prompt_len
        assert (prompt_len, target) == (row["prompt_length"], row["completion_length"])
        assert row["sequence_length"] == len(ids)
        default = _sft_prepare(row, tokenizer, TRL_DEFAULT)
        cut_by_default += sum(1 for x in default["labels"] if x != -100) < target
    assert cut_by_default > 0  # TRL's default max_length would have cut targets off: sharp


def test_the_card_names_the_tokenizer_and_counts_the_rows_it_leaves_out(published: dict) -> None:
    import polars as pl

    card, dest = published["card"], published["dest"]
    assert "with its chat template**" in card
    max_length, limit = _card_settings(card, "SFTTrainer")
    rows = pl.read_parquet(dest / "data" / "prompt_completion" / "*.parquet")
    facts = json.loads((dest / "statistics.json").read_text())["configs"]["prompt_completion"]
    assert facts["lengths"]["sequence"]["max"] == rows["sequence_length"].max()
    assert facts["lengths"]["max_length"] == max_length
    over = rows.filter(pl.col("sequence_length") > (limit or max_length)).height
    assert facts["lengths"]["rows_over"] == over
    if limit is None:
        assert max_length >= rows["sequence_length"].max()
    else:
        assert f"# leaves out {over} longer rows" in card


def test_dpo_pairs_fit_the_dpo_max_length_with_both_answers(published: dict) -> None:
    from datasets import load_dataset
    from trl.data_utils import _tokenize

    tokenizer, card = published["tokenizer"], published["card"]
    max_length, limit = _card_settings(card, "DPOTrainer")
    pairs = load_dataset(
        str(published["dest"]), "preferences", split="train", cache_dir=published["cache"]
    )
    if limit is not None:
        pairs = pairs.filter(lambda row: row["sequence_length"] <= limit)
    for row in pairs:
        for answer in ("chosen", "rejected"):
            ids = _tokenize(tokenizer, row["prompt"] + row[answer])["input_ids"]
            assert len(ids) <= max_length
            assert len(ids) == row["prompt_length"] + row[f"{answer}_length"]
