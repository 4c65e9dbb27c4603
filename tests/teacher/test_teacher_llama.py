"""The embedded teacher, constrained by the compressor schema, answers in the compressor format.

Real Gemma 3 270M, always out of process: through the managed llama.cpp server (`local-server`,
where the schema goes as `response_format` json_object + schema and llama.cpp compiles it to a
grammar) and through the in-process provider (`local`, which compiles the grammar itself) run
in a subprocess. Every reply that was not cut by `max_tokens` must parse as a compressor output
and match the schema; the rows built from them carry no parse failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from builder.ingest.formats import detect
from builder.ingest.formats.source import Source
from builder.llm.local import ManagedLlamaServer
from builder.llm.openai_provider import OpenAIProvider
from builder.nap.step import StepJob, compressor_prompt
from builder.steps.pairing import EligibilityRules, build_steps
from builder.teacher.candidates import candidates_from_replies
from builder.teacher.output import CompressorOutput
from builder.teacher.parse import parse_output
from builder.teacher.prompt import COMPRESSOR_SCHEMA, PROMPT_VERSION, RANGE_PATTERN, teacher_request
from tests.paths import REPO, SAMPLES

pytestmark = pytest.mark.llama

PARSE_FAILURES = {
    "empty_reply",
    "no_json",
    "invalid_json",
    "multiple_json",
    "bad_type",
    "bad_content",
    "bad_range_syntax",
}
STEPS, SAMPLES_PER_STEP, MAX_TOKENS = 2, 2, 256
TIMEOUT_S = 900.0  # 2 shared cores: one 1.7k-token request took 343 s under load


def demo_jobs() -> list[StepJob]:
    """The first eligible steps of the demo's sample trajectory (the demo's eligibility)."""
    source = Source(SAMPLES / "mini-swe-agent" / "textstats__empty-summary.traj.json")
    adapter = detect(source)
    jobs = [
        StepJob(record, step, adapter)
        for record in adapter.load(source)
        for step in build_steps(record, adapter, EligibilityRules(min_tokens=256))
        if step.eligible
    ]
    assert len(jobs) >= STEPS
    return jobs[:STEPS]


def matches_schema(text: str) -> bool:
    """The reply is one JSON object of one exact variant of `COMPRESSOR_SCHEMA` (checked by
    hand: no jsonschema here). `strict=False`: llama.cpp's JSON grammar lets raw newlines into
    strings, which the parser accepts too."""
    value = json.loads(text, strict=False)
    if not isinstance(value, dict):
        return False
    kind, content = value.get("type"), value.get("content")
    variants = {v["properties"]["type"]["const"]: v for v in COMPRESSOR_SCHEMA["anyOf"]}
    if kind not in variants or set(value) != set(variants[kind]["properties"]):
        return False
    if kind == "plain":
        return isinstance(content, str) and len(content) > 0
    if kind == "code":
        return (
            isinstance(content, list)
            and len(content) > 0
            and all(isinstance(c, str) and re.match(RANGE_PATTERN, c) for c in content)
        )
    return True


def check_replies(job: StepJob, replies: list[tuple[str, str | None]]) -> int:
    """Assert every complete reply is a valid compressor answer; the number of complete ones."""
    complete = [text for text, finish in replies if finish != "length"]
    for text in complete:
        assert matches_schema(text), text
        assert isinstance(parse_output(text), CompressorOutput), text
    rows = candidates_from_replies(
        job.step, complete, teacher_model="gemma-3-270m", prompt_version=PROMPT_VERSION
    )
    assert not [r.invalid_reason for r in rows if r.invalid_reason in PARSE_FAILURES]
    return len(complete)


def test_teacher_through_the_managed_server_answers_in_the_schema(
    llama_server: ManagedLlamaServer,
) -> None:
    provider = OpenAIProvider(
        llama_server.model,
        base_url=llama_server.base_url,
        api_key_env="NAP_TEST_NO_KEY",
        timeout=TIMEOUT_S,
    )

    async def ask(job: StepJob) -> list[tuple[str, str | None]]:
        system, user = compressor_prompt(job)
        request = teacher_request(system, user, n=SAMPLES_PER_STEP, max_tokens=MAX_TOKENS, seed=0)
        response = await provider.complete(request)
        return [(c.text, c.finish_reason) for c in response.completions]

    async def run_all() -> list[list[tuple[str, str | None]]]:
        try:
            return [await ask(job) for job in demo_jobs()]
        finally:
            await provider.aclose()

    answers = asyncio.run(run_all())
    assert provider.capabilities.response_format == "json_object"  # schema sent as a grammar
    complete = sum(
        check_replies(job, replies) for job, replies in zip(demo_jobs(), answers, strict=True)
    )
    assert complete >= STEPS * SAMPLES_PER_STEP // 2


def test_teacher_in_process_answers_in_the_schema(gguf_path: Path) -> None:
    jobs = demo_jobs()
    requests: list[dict[str, Any]] = []
    for job in jobs:
        system, user = compressor_prompt(job)
        requests.append(
            {"system": system, "user": user, "n": SAMPLES_PER_STEP, "max_tokens": MAX_TOKENS}
        )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.teacher.local_teacher", str(gguf_path)],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers = json.loads(done.stdout)
    complete = sum(
        check_replies(job, [(t, f) for t, f in replies])
        for job, replies in zip(jobs, answers, strict=True)
    )
    assert complete >= STEPS * SAMPLES_PER_STEP // 2
