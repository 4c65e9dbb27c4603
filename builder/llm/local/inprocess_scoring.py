"""Prompt log-probabilities from the embedded model, in process (llama-cpp-python).

Why not `Llama(logits_all=True)`: Gemma's vocabulary has 262k entries, so keeping logits for
every prompt position costs about 1 MB per token. Instead the context is evaluated with no
logits kept (llama.cpp's KV cache reuses the longest prefix already evaluated, so the history
shared by the raw context and every candidate of a step is evaluated once), and one extra batch
asks for logits only at the positions that predict the continuation's tokens.
"""

from __future__ import annotations

import math
from typing import Any

from builder.errors import PermanentLLMError
from builder.llm.scoring import ScoreRequest, TokenLogprob, prompt_text, span_tokens


def score_request(llama: Any, request: ScoreRequest, n_ctx: int) -> tuple[list[Any], int]:
    """Per continuation, the span's tokens with log-probabilities; and the prompt tokens."""
    prompt = llama.tokenize(prompt_text(request).encode(), add_bos=True, special=True)
    found: list[tuple[TokenLogprob, ...]] = []
    for continuation in request.continuations:
        tokens = llama.tokenize(continuation.text.encode(), add_bos=False, special=False)
        if len(prompt) + len(tokens) >= n_ctx:
            raise PermanentLLMError(
                f"prompt of {len(prompt) + len(tokens)} tokens does not fit the local model's "
                f"context of {n_ctx}",
                kind="context_length",
            )
        logprobs = continuation_logprobs(llama, prompt, tokens)
        pieces = list(zip(token_texts(llama, tokens), logprobs, strict=True))
        span = span_tokens(pieces, continuation)
        if span is None:
            raise PermanentLLMError("could not map the local model's tokens onto the action")
        found.append(span)
    return found, len(prompt)


def token_texts(llama: Any, tokens: list[int]) -> list[str]:
    """The text each token adds (decoding growing prefixes keeps multi-byte characters whole)."""
    texts: list[str] = []
    previous = ""
    for end in range(1, len(tokens) + 1):
        text = llama.detokenize(tokens[:end]).decode("utf-8", errors="ignore")
        texts.append(text[len(previous) :])
        previous = text
    return texts


def continuation_logprobs(llama: Any, prompt: list[int], continuation: list[int]) -> list[float]:
    """log p(continuation[i] | prompt, continuation[:i]) for every i (teacher forcing)."""
    import llama_cpp
    import numpy as np

    if not continuation:
        return []
    cached = type(llama).longest_token_prefix(list(llama._input_ids), prompt)
    keep = min(cached, len(prompt) - 1)
    llama.n_tokens = keep
    if keep < len(prompt) - 1:
        llama.eval(prompt[keep:-1])  # logits of these positions are not kept
    feed = [prompt[-1], *continuation[:-1]]  # position i predicts continuation[i]
    n_vocab = llama.n_vocab()
    values: list[float] = []
    for chunk_start in range(0, len(feed), llama.n_batch):
        chunk = feed[chunk_start : chunk_start + llama.n_batch]
        n_past = llama.n_tokens
        llama._ctx.kv_cache_seq_rm(-1, n_past, -1)
        batch = llama_cpp._internals.LlamaBatch(n_tokens=len(chunk), embd=0, n_seq_max=1)
        try:
            batch.batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                batch.batch.token[i] = token
                batch.batch.pos[i] = n_past + i
                batch.batch.seq_id[i][0] = 0
                batch.batch.n_seq_id[i] = 1
                batch.batch.logits[i] = True
            llama._ctx.decode(batch)
            for i in range(len(chunk)):
                row = np.ctypeslib.as_array(llama._ctx.get_logits_ith(i), shape=(n_vocab,))
                target = continuation[chunk_start + i]
                values.append(float(row[target]) - _logsumexp(row))
        finally:
            batch.close()
        llama.input_ids[n_past : n_past + len(chunk)] = chunk
        llama.n_tokens = n_past + len(chunk)
    return values


def _logsumexp(row: Any) -> float:
    import numpy as np

    peak = float(row.max())
    return peak + math.log(float(np.exp(row.astype(np.float64) - peak).sum()))
