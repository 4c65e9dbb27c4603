"""The floor's inputs: the bodies a run sent, as the scripted server received them."""

from __future__ import annotations

import json

import httpx

from benchmarks.scripted import join_frames, recorded, split_frames
from tests.llm.servers import AsyncOpenAIServer


def test_frames_round_trip_bodies_holding_newlines_and_digits() -> None:
    payloads = [b'{"a": "x\\ny"}', b"", b"12\n34", b"\n" * 3]
    assert split_frames(join_frames(payloads)) == payloads
    assert split_frames(b"") == []


def test_the_server_hands_back_each_body_byte_for_byte_and_forgets_them_on_reset() -> None:
    sent = [
        b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n',
        json.dumps({"model": "m", "messages": [{"role": "user", "content": "a\nb"}], "n": 2},
                   indent=1).encode(),
    ]  # fmt: skip
    with AsyncOpenAIServer(record=True) as server:
        with httpx.Client() as client:
            for body in sent:
                client.post(f"{server.base_url}/chat/completions", content=body).raise_for_status()
            assert recorded(server.base_url) == sent
            root = f"http://127.0.0.1:{server.port}"
            assert client.get(f"{root}/bodies").json()["bodies"] == [json.loads(b) for b in sent]
            client.get(f"{root}/reset")
        assert recorded(server.base_url) == []
