"""The scripted NAP endpoint of `nap_server`, plus prompt log-probabilities in vLLM's and
SGLang's documented shapes, so likelihood mode runs end to end over real HTTP.

- `POST /tokenize` (vLLM): `{"tokens": [...], "count", "max_model_len"}` for `messages` (chat
  template applied, `add_generation_prompt`) or a plain `prompt`.
- `POST /v1/completions` with token-id prompts and `prompt_logprobs` (vLLM): per choice a
  `prompt_logprobs` list, `None` for the first token, else
  `{token_id: {"logprob", "rank", "decoded_token"}}`.
- `POST /generate` with `return_logprob`, `logprob_start_len`, `return_text_in_logprobs`
  (SGLang): per prompt `meta_info.input_token_logprobs` = `[[logprob, token_id, text], ...]`
  from `logprob_start_len` on.

The scripted model agrees with the scripted agent by construction: the agent "gets lost" when
the observation is a plain summary, so the assistant turn after such an observation gets
log-probability -5 per token, and -0.1 otherwise. A plain summary therefore fails the
likelihood gate exactly where it fails the generate gate.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.llm.servers import FakeAPIServer
from tests.run.nap_server import nap_text

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
MODEL_TURN = "<start_of_turn>model\n"
USER_TURN = "<start_of_turn>user\n"
LOST = "[output compressed: summary"
PREFIX_LOGPROB, KEPT_LOGPROB, LOST_LOGPROB = -1.0, -0.1, -5.0


def tokenize(text: str) -> list[str]:
    return [m.group() for m in _TOKEN.finditer(text)]


def chat_text(messages: list[dict[str, Any]]) -> str:
    """The stand-in's chat template (Gemma-like turns), ending with an open model turn."""
    turns = []
    for m in messages:
        side = "model" if m.get("role") == "assistant" else "user"
        calls = json.dumps(m["tool_calls"]) if m.get("tool_calls") else ""
        turns.append(f"<start_of_turn>{side}\n{m.get('content') or ''}{calls}<end_of_turn>\n")
    return "".join(turns) + MODEL_TURN


def scripted_logprobs(text: str, tokens: list[str] | None = None) -> list[tuple[str, float | None]]:
    """(token text, logprob) of every token of `text` (tokenized by the stand-in unless
    `tokens` are given); the first token has none."""
    tokens = tokenize(text) if tokens is None else tokens
    turn = text.rfind(MODEL_TURN)
    continuation_at = turn + len(MODEL_TURN) if turn >= 0 else len(text)
    last_user = text.rfind(USER_TURN, 0, max(turn, 0))
    lost = LOST in text[last_user:turn] if turn >= 0 else False
    pieces: list[tuple[str, float | None]] = []
    at = 0
    for token in tokens:
        value = (
            (LOST_LOGPROB if lost else KEPT_LOGPROB) if at >= continuation_at else PREFIX_LOGPROB
        )
        pieces.append((token, value if pieces else None))
        at += len(token)
    return pieces


def _prompts(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value]


class LogprobServer(FakeAPIServer):
    """`nap_server` with the vLLM and SGLang prompt log-probability routes."""

    def __init__(self, latency_s: float = 0.0) -> None:
        super().__init__(api="openai", latency_s=latency_s, text=nap_text)
        self.vocab: dict[str, int] = {}
        self.texts: list[str] = []

    def other_answer(self, path: str, body: dict[str, Any], number: int) -> tuple[int, Any]:
        if path == "/tokenize":
            return 200, self.tokenize_answer(body)
        if path.endswith("/v1/completions") and "prompt_logprobs" in body:
            return 200, self.vllm_answer(body)
        if path.endswith("/generate") and body.get("return_logprob"):
            return 200, self.sglang_answer(body)
        return super().other_answer(path, body, number)

    def tokenize_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """vLLM's /tokenize: `messages` through the chat template, or a plain `prompt`."""
        text = chat_text(body["messages"]) if "messages" in body else str(body["prompt"])
        with self.lock:
            ids = [self.vocab.setdefault(t, len(self.vocab)) for t in tokenize(text)]
            self.texts.extend(list(self.vocab)[len(self.texts) :])
        return {"count": len(ids), "max_model_len": 32768, "tokens": ids}

    def vllm_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        choices = []
        total = 0
        for index, prompt in enumerate(body["prompt"]):
            with self.lock:
                tokens = [self.texts[i] for i in prompt]  # vLLM: token-id prompts
            entries: list[dict[str, Any] | None] = []
            for token_id, (token, logprob) in zip(
                prompt, scripted_logprobs("".join(tokens), tokens), strict=True
            ):
                entry = {"logprob": logprob, "rank": 1, "decoded_token": token}
                entries.append(None if logprob is None else {str(token_id): entry})
            total += len(entries)
            choices.append(
                {
                    "index": index,
                    "text": " x",
                    "logprobs": None,
                    "finish_reason": "length",
                    "prompt_logprobs": entries,
                }
            )
        usage = {"prompt_tokens": total, "completion_tokens": len(choices)}
        return {"id": "cmpl-x", "object": "text_completion", "choices": choices, "usage": usage}

    @staticmethod
    def sglang_answer(body: dict[str, Any]) -> list[dict[str, Any]] | dict[str, Any]:
        start = int(body.get("logprob_start_len") or 0)
        with_text = bool(body.get("return_text_in_logprobs"))
        answers = []
        for prompt in _prompts(body["text"]):
            pieces = scripted_logprobs(prompt)
            logprobs = [
                [logprob, 1000 + i, token if with_text else None]
                for i, (token, logprob) in enumerate(pieces)
            ][start:]
            meta = {
                "prompt_tokens": len(pieces),
                "completion_tokens": 1,
                "input_token_logprobs": logprobs,
                "output_token_logprobs": [[-0.1, 7, " x" if with_text else None]],
            }
            answers.append({"text": " x", "meta_info": meta})
        return answers if isinstance(body["text"], list) else answers[0]
