"""The `compressor:` block and the SPEC parser."""

from __future__ import annotations

import pytest

from builder.config import config_hash, validate_config
from builder.errors import ConfigError
from builder.evaluate.compressors import Spec, parse_spec, parse_specs

BASE = {"inputs": [{"path": "/data"}]}
BLOCK = {"provider": "openai", "model": "my-compressor", "base_url": "http://127.0.0.1:9/v1"}


def test_block_is_optional_and_validated() -> None:
    assert validate_config(BASE).compressor is None
    cfg = validate_config({**BASE, "compressor": BLOCK})
    assert cfg.compressor is not None and cfg.compressor.temperature == 0.0
    assert cfg.compressor.structured
    with pytest.raises(ConfigError, match=r"unknown key .compressor\.modle."):
        validate_config({**BASE, "compressor": {**BLOCK, "modle": "x"}})
    with pytest.raises(ConfigError, match="NAME of an environment variable"):
        validate_config({**BASE, "compressor": {**BLOCK, "api_key_env": "sk-123 456"}})


def test_block_does_not_change_the_run_hash() -> None:
    """eval alone reads it: adding one must not discard a run's tables on the next run."""
    plain = validate_config(BASE)
    with_block = validate_config({**BASE, "compressor": BLOCK})
    assert config_hash(plain) == config_hash(with_block)
    other_gate = validate_config({**BASE, "compressor": BLOCK, "gate": {"threshold": 0.9}})
    assert config_hash(other_gate) != config_hash(with_block)


def test_budget_needs_a_price_for_a_remote_compressor() -> None:
    prices = {"gemma-3-270m": {"input": 0, "output": 0}}
    budget = {**BASE, "limits": {"budget_usd": 1.0}, "prices": prices}
    remote = {**BLOCK, "base_url": "https://compressor.example/v1"}
    with pytest.raises(ConfigError, match=r"compressor\.model .my-compressor."):
        validate_config({**budget, "compressor": remote})
    validate_config({**budget, "compressor": BLOCK})  # a server on this machine is free


def test_specs() -> None:
    cfg = validate_config({**BASE, "compressor": BLOCK})
    assert parse_spec("rule:head_tail", cfg) == Spec("rule", "head_tail")
    assert parse_spec("rule:head_tail", cfg).folder == "rule-head_tail"
    assert [s.name for s in parse_specs(["omit", "teacher", "omit", "endpoint"], cfg)] == [
        "omit",
        "teacher",
        "endpoint",
    ]
    with pytest.raises(ConfigError, match="unknown rule 'nope'"):
        parse_spec("rule:nope", cfg)
    with pytest.raises(ConfigError, match="unknown compressor"):
        parse_spec("gzip", cfg)
    with pytest.raises(ConfigError, match="compressor:"):
        parse_spec("endpoint", validate_config(BASE))
