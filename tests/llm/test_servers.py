"""The stand-in endpoint's in-flight figures, which `make bench` reads its targets from."""

from __future__ import annotations

import httpx
import pytest

from tests.llm.servers import AsyncOpenAIServer, saturation

LATENCY = 0.2


def waves(sizes: list[int], gap: float = 0.0) -> list[tuple[float, float]]:
    """Requests in synchronous waves of `sizes`, each lasting LATENCY, `gap` apart."""
    intervals = []
    start = 0.0
    for size in sizes:
        intervals += [(start, start + LATENCY)] * size
        start += LATENCY + gap
    return intervals


def test_a_job_that_ends_on_a_partial_wave_is_saturated_until_it_cannot_be():
    figures = saturation(waves([64] * 25 + [8]), 64)
    assert figures["saturated_in_flight"] == pytest.approx(1.0)
    assert figures["drain_s"] == pytest.approx(LATENCY)  # the last wave of 8


def test_idle_slots_between_waves_count_against_the_client():
    figures = saturation(waves([64] * 25 + [8], gap=0.05), 64)
    # each full wave holds 64 for 0.2 s of every 0.25 s until the 25th ends
    assert figures["saturated_in_flight"] == pytest.approx(25 * 0.2 / (25 * 0.25 - 0.05))


def test_a_client_that_fills_half_the_limit_scores_half():
    assert saturation(waves([32] * 40), 64)["saturated_in_flight"] == pytest.approx(0.5)


def test_fewer_requests_than_the_limit_never_saturate():
    assert saturation(waves([8]), 64)["saturated_in_flight"] == 0.0


def test_the_server_reports_saturation_for_the_concurrency_asked():
    with AsyncOpenAIServer(latency_s=0.05) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        with httpx.Client() as client:
            for _ in range(3):
                client.post(f"{server.base_url}/chat/completions", json=body).raise_for_status()
            root = server.base_url.removesuffix("/v1")
            stats = client.get(f"{root}/stats?concurrency=1").json()
            plain = client.get(f"{root}/stats").json()
    assert stats["count"] == 3
    # one request at a time on a limit of 1: the window is the whole span, in flight but for
    # the client's round trips between requests
    assert 0.5 < stats["saturated_in_flight"] <= 1.0
    assert "saturated_in_flight" not in plain
