"""Prompt log-probabilities from the embedded model, computed in a child process (a native
crash fails this test, not the test run): the selective-logits path must equal a full
`logits_all` evaluation, reuse the cached prefix, and see an identifier the context holds."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.llama

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = textwrap.dedent(
    """
    import asyncio, json, math
    import numpy as np
    from llama_cpp import Llama
    from builder.llm.scoring import Continuation, ScoreRequest, prompt_text
    from builder.llm.local.inprocess import LocalProvider
    from builder.llm.model_files import ensure_model
    from schemas.trajectories import Message

    ask = "Reply with one bash command."
    seen = (Message("user", "The failing test is in zebra_77_test.py. " + ask),)
    unseen = (Message("user", "A test is failing somewhere. " + ask),)
    action = "cat zebra_77_test.py"
    reply = "```bash\\n" + action + "\\n```"
    continuation = Continuation(reply, (8, 8 + len(action)))

    async def main():
        provider = LocalProvider(n_ctx=1024)
        first = await provider.score(ScoreRequest(seen, None, (continuation,)))
        again = await provider.score(ScoreRequest(seen, None, (continuation,)))
        other = await provider.score(ScoreRequest(unseen, None, (continuation,)))
        provider.close()
        return first, again, other

    first, again, other = asyncio.run(main())
    full = Llama(model_path=str(ensure_model()), n_ctx=1024, logits_all=True, verbose=False)
    prompt = full.tokenize(prompt_text(ScoreRequest(seen, None, ())).encode(), True, True)
    tokens = full.tokenize(reply.encode(), add_bos=False, special=False)
    full.eval(prompt + tokens)
    scores = np.asarray(full.scores[: len(prompt) + len(tokens)], dtype=np.float64)
    reference = []
    for i, token in enumerate(tokens):
        row = scores[len(prompt) + i - 1]
        peak = row.max()
        reference.append(float(row[token] - peak - math.log(np.exp(row - peak).sum())))
    texts = [full.detokenize(tokens[: i + 1]).decode() for i in range(len(tokens))]
    pieces = [b[len(a):] for a, b in zip([""] + texts, texts)]
    span = [(p, v) for p, v in zip(pieces, reference) if p.strip() and p.strip() in action]
    print(json.dumps({
        "first": [[t.text, t.logprob] for t in first.tokens[0]],
        "again": [[t.text, t.logprob] for t in again.tokens[0]],
        "other": [[t.text, t.logprob] for t in other.tokens[0]],
        "full": span,
    }))
    """
)


def test_embedded_logprobs_match_a_full_evaluation_and_see_the_context() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    first, again, other, full = got["first"], got["again"], got["other"], got["full"]
    assert "".join(t for t, _ in first).strip() == "cat zebra_77_test.py"
    assert all(v <= 0 for _, v in first)
    assert [t for t, _ in first] == [t for t, _ in full]
    assert [v for _, v in first] == pytest.approx([v for _, v in full], abs=0.05)
    # the second request reuses the cached prefix and gives the same numbers
    assert [v for _, v in again] == pytest.approx([v for _, v in first], abs=1e-3)
    # the identifier is far more likely when the context holds it
    seen = sum(v for t, v in first if "zebra" in t)
    unseen = sum(v for t, v in other if "zebra" in t)
    assert seen > unseen + 2.0
