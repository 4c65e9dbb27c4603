"""Run by test_trl.py in a subprocess (one per PYTHONHASHSEED): TRL's own data utilities over
the published `sft` and `preferences` configs, with a tokenizer built here. Prints one JSON line.

`python -m tests.publish.trl_check DATASET_DIR CACHE_DIR`
"""

from __future__ import annotations

import json
import sys
from typing import Any

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
TEXT_KEYS = ("text", "prompt", "chosen", "rejected", "completion")


def local_tokenizer() -> Any:
    """A tiny word-level tokenizer with a chat template; nothing is downloaded."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "<|end|>": 1}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", eos_token="<|end|>"
    )
    tokenizer.chat_template = TEMPLATE
    return tokenizer


def main(folder: str, cache: str) -> dict[str, Any]:
    from datasets import load_dataset
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    tokenizer = local_tokenizer()
    out: dict[str, Any] = {"torch_loaded": False}
    for config in ("sft", "preferences"):
        rows = load_dataset(folder, config, split="train", cache_dir=cache)
        verdicts, applied = [], []
        for row in rows:
            verdicts.append(is_conversational(row))
            formatted = maybe_apply_chat_template(row, tokenizer)
            applied.append({k: formatted[k] for k in TEXT_KEYS if k in formatted})
        out[config] = {"conversational": verdicts, "applied": applied, "rows": list(rows)}
    # the shape the issue reported: a plain `prompt` next to `messages`
    old = {"prompt": "plain text", "messages": [{"role": "user", "content": "hi"}]}
    out["old_shape_conversational"] = is_conversational(old)
    out["torch_loaded"] = "torch" in sys.modules
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2]), default=str))
