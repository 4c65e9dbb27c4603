"""The `replay` section: rounds and prefix modes, their errors, and the config hash."""

from __future__ import annotations

from typing import Any

import pytest

from builder.config import config_hash, validate_config
from builder.config.loading import hashed_keys
from builder.errors import ConfigError
from builder.nap.from_config import nap_settings

BASE: dict[str, Any] = {"inputs": ["/data"], "seed": 3}
ENDPOINT = {"model": "my-compressor", "base_url": "http://10.0.0.5:8000/v1"}


def _cfg(**extra: Any) -> Any:
    return validate_config({**BASE, **extra})


def _hash(**extra: Any) -> str:
    return config_hash(_cfg(**extra))


def test_the_offline_round_keeps_the_hash_of_a_config_without_the_section() -> None:
    assert "replay" not in hashed_keys(_cfg(replay={"prefix": "raw", "round": 0}))
    assert _hash(replay={"prefix": "raw"}) == _hash() == _hash(replay={"round": 0})
    assert nap_settings(_cfg()).replay.round == 0


def test_prefix_mode_compressor_and_round_each_change_the_hash() -> None:
    compressed = {"prefix": "compressed", "prefix_compressor": "rule:head_tail"}
    hashes = {
        _hash(),
        _hash(replay=compressed),
        _hash(replay={**compressed, "prefix_compressor": "rule:dedupe_repeated_lines"}),
        _hash(replay={**compressed, "round": 2}),
        _hash(replay={"prefix": "deployed"}),
    }
    assert len(hashes) == 5


def test_an_endpoint_prefix_compressor_puts_its_model_in_the_hash_not_its_key() -> None:
    replay = {"prefix": "compressed", "prefix_compressor": "endpoint"}
    base = _hash(replay=replay, compressor=ENDPOINT)
    assert _hash(replay=replay, compressor={**ENDPOINT, "model": "round-2"}) != base
    assert _hash(replay=replay, compressor={**ENDPOINT, "temperature": 0.5}) != base
    assert _hash(replay=replay, compressor={**ENDPOINT, "api_key_env": "OTHER_KEY"}) == base
    # `eval`'s compressor block alone stays out of a run's hash, as before
    assert _hash(compressor=ENDPOINT) == _hash()
    settings = nap_settings(_cfg(replay=replay, compressor=ENDPOINT)).replay
    assert settings.compressor_id == "endpoint:my-compressor" and settings.round == 1
    assert settings.endpoint is not None and settings.endpoint.temperature == 0.0


@pytest.mark.parametrize(
    ("replay", "extra", "message"),
    [
        ({"prefix": "compressed"}, {}, "prefix: compressed needs prefix_compressor"),
        ({"prefix_compressor": "rule:head_tail"}, {}, "only used with prefix: compressed"),
        ({"prefix": "compressed", "prefix_compressor": "rule:nope"}, {}, "unknown rule 'nope'"),
        ({"prefix": "compressed", "prefix_compressor": "gzip"}, {}, "unknown compressor"),
        ({"prefix": "deployed", "round": 0}, {}, "round 0 is the offline round"),
        ({"round": 2}, {}, "set prefix to compressed or deployed"),
        ({"prefix": "sideways"}, {}, "replay.prefix"),
        ({"prefix": "compressed", "prefix_compressor": "endpoint"}, {}, "needs a `compressor:`"),
    ],
)
def test_an_inconsistent_replay_section_is_refused_with_the_fix(
    replay: dict[str, Any], extra: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        _cfg(replay=replay, **extra)
