"""Pipeline config: shipped YAMLs, overrides, readable errors, path resolution, hash and dump."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from builder.config import (
    PipelineConfig,
    config_hash,
    dump_resolved,
    load_config,
    validate_config,
)
from builder.errors import ConfigError
from builder.nap.from_config import gate_counts

REPO = Path(__file__).resolve().parents[2]
PIPELINES = sorted((REPO / "pipelines").glob("*.yaml"))


def _config(tmp_path: Path, text: str, name: str = "run.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture
def minimal(tmp_path: Path) -> Path:
    return _config(tmp_path, "inputs: [{path: data/}]\n")


def test_the_four_shipped_pipelines_exist() -> None:
    assert {p.name for p in PIPELINES} >= {
        "demo.yaml",
        "openai.yaml",
        "anthropic.yaml",
        "vllm.yaml",
    }


@pytest.mark.parametrize("path", PIPELINES, ids=lambda p: p.name)
def test_every_shipped_pipeline_loads_and_validates(path: Path) -> None:
    cfg = load_config(path)
    assert cfg.inputs
    assert Path(cfg.output.dir).is_absolute()
    assert yaml.safe_load(dump_resolved(cfg))["teacher"]["model"] == cfg.teacher.model


def test_demo_runs_the_embedded_model_on_the_bundled_samples() -> None:
    cfg = load_config(REPO / "pipelines" / "demo.yaml")
    assert cfg.inputs[0].path == str(REPO / "builder" / "samples")
    assert cfg.output.dir == str(REPO / "out" / "demo")
    assert cfg.teacher.provider == cfg.agent.provider == "local-server"
    assert cfg.teacher.base_url is None and cfg.agent.base_url is None
    assert cfg.teacher.samples <= 4


def test_remote_pipelines_name_key_variables_and_price_their_models() -> None:
    for name in ("openai.yaml", "anthropic.yaml"):
        cfg = load_config(REPO / "pipelines" / name)
        assert cfg.teacher.api_key_env and cfg.teacher.api_key_env.isupper()
        assert cfg.teacher.model in cfg.prices and cfg.agent.model in cfg.prices
    vllm = load_config(REPO / "pipelines" / "vllm.yaml")
    assert vllm.agent.base_url == "http://localhost:8000/v1"
    local = load_config(REPO / "pipelines" / "vllm.yaml", ["agent.base_url=http://127.0.0.1:9/v1"])
    assert local.agent.base_url == "http://127.0.0.1:9/v1"


def test_defaults_follow_the_method(minimal: Path) -> None:
    cfg = load_config(minimal)
    assert (cfg.teacher.samples, cfg.teacher.temperature) == (8, 1.0)
    assert (cfg.references.mode, cfg.references.samples, cfg.references.temperature) == (
        "sampled", 8, 0.7,
    )  # fmt: skip
    # issue 26: k of n references must agree; θ as calibrated on the near-miss benchmark
    assert (cfg.gate.aggregate, cfg.gate.threshold) == ("agree", 0.75)
    assert gate_counts(cfg) == (2, 4)  # 2 of the 8 samples, at least 4 valid
    assert cfg.agent.temperature == 0.0
    assert cfg.eligibility.min_tokens == 256
    assert cfg.selection.max_per_step == 4 and cfg.selection.fallback == "drop"
    assert cfg.cache_dir() == Path(cfg.output.dir) / "cache"


def test_gate_counts_follow_the_references_and_must_fit_them(minimal: Path) -> None:
    logged = load_config(minimal, ["references.mode=logged"])
    assert gate_counts(logged) == (1, 1)
    assert gate_counts(load_config(minimal, ["references.samples=3"])) == (2, 2)
    explicit = load_config(minimal, ["gate.min_agree=3", "gate.min_references=6"])
    assert gate_counts(explicit) == (3, 6)
    with pytest.raises(ConfigError, match=r"gate.min_agree=2 but a step has at most 1 reference"):
        load_config(minimal, ["references.mode=logged", "gate.min_agree=2"])
    with pytest.raises(ConfigError, match=r"gate.min_references=9 .* at most 8"):
        load_config(minimal, ["gate.min_references=9"])
    with pytest.raises(ConfigError, match=r"gate.min_agree=5 is more than gate.min_references=4"):
        load_config(minimal, ["gate.min_agree=5", "gate.min_references=4"])


def test_scalar_nested_and_list_overrides_are_parsed_as_yaml(
    minimal: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    cfg = load_config(
        minimal,
        [
            "gate.threshold=0.7",
            "teacher.samples=3",
            "selection.exhaustive=true",
            "publish.repo=null",
            "inputs=[{path: other/, format: swe-agent}, {path: more/}]",
            "inputs.1.options={messages: conversation}",
            'prices."gpt-4.1".input=2.5',
            'prices."gpt-4.1".output=10',
        ],
    )
    assert cfg.gate.threshold == 0.7
    assert cfg.teacher.samples == 3
    assert cfg.selection.exhaustive is True
    assert cfg.publish.repo is None
    assert [i.path for i in cfg.inputs] == [str(workdir / "other"), str(workdir / "more")]
    assert cfg.inputs[0].format == "swe-agent"
    assert cfg.inputs[1].options == {"messages": "conversation"}
    assert cfg.prices["gpt-4.1"].cost(1_000_000, 0, 100_000) == pytest.approx(3.5)


def test_an_unknown_key_names_it_and_lists_the_valid_keys(minimal: Path) -> None:
    with pytest.raises(ConfigError) as override:
        load_config(minimal, ["gate.thresold=0.7"])
    message = str(override.value)
    assert "'gate.thresold'" in message
    assert "aggregate, control, control_floor, likelihood_api" in message
    assert "mode, similarity, threshold, top_k" in message
    in_file = _config(minimal.parent, "inputs: [a/]\nteacher: {sampels: 3}\n", "typo.yaml")
    with pytest.raises(ConfigError) as from_file:
        load_config(in_file)
    assert "'teacher.sampels'" in str(from_file.value)
    assert "samples" in str(from_file.value) and "typo.yaml" in str(from_file.value)


def test_a_wrong_choice_names_the_key_the_value_and_the_allowed_values(minimal: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(minimal, ["gate.similarity=fuzzy", "agent.provider=gemini"])
    message = str(exc.value)
    assert "gate.similarity: got 'fuzzy'; allowed values: 'exact', 'normalized', 'semantic'" in (
        message
    )
    assert "agent.provider: got 'gemini'; allowed values: 'local', 'local-server', 'openai'" in (
        message
    )


def test_an_unknown_input_format_lists_the_adapters(minimal: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(minimal, ["inputs.0.format=swe_agent"])
    message = str(exc.value)
    assert "inputs.0.format: unknown format" in message and "'swe_agent'" in message
    assert "'auto'" in message and "'mini-swe-agent'" in message and "'hf-dataset'" in message


def test_an_unknown_rule_lists_the_known_rules(minimal: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(minimal, ["teacher.rules=[head_tail, summarise_all]"])
    message = str(exc.value)
    assert "teacher.rules: unknown rule(s) ['summarise_all']" in message
    assert "'head_tail'" in message and "'unchanged'" in message


def test_out_of_range_values_and_bad_overrides_fail_fast(minimal: Path) -> None:
    with pytest.raises(ConfigError, match=r"gate\.threshold: .*less than or equal to 1"):
        load_config(minimal, ["gate.threshold=1.5"])
    with pytest.raises(ConfigError, match=r"expected dotted\.key=value"):
        load_config(minimal, ["gate.threshold"])
    with pytest.raises(ConfigError, match="is a list: use an index"):
        load_config(minimal, ["inputs.path=x"])
    with pytest.raises(ConfigError, match="sum to 1"):
        load_config(minimal, ["publish.splits={train: 0.9, test: 0.2}"])
    with pytest.raises(ConfigError, match="inputs: required key is missing"):
        load_config(_config(minimal.parent, "seed: 1\n", "empty.yaml"))


def test_an_api_key_pasted_into_the_config_is_rejected_without_echoing_it(minimal: Path) -> None:
    secret = "sk-proj-abcdefghijklmnop"
    with pytest.raises(ConfigError) as exc:
        load_config(minimal, [f"teacher.api_key_env={secret}"])
    assert "teacher.api_key_env" in str(exc.value) and "NAME of an environment variable" in str(
        exc.value
    )
    assert secret not in str(exc.value)
    with pytest.raises(ConfigError) as extra:
        load_config(minimal, [f"agent.api_key={secret}"])
    assert "'agent.api_key'" in str(extra.value) and secret not in str(extra.value)


def test_a_budget_on_a_remote_model_needs_its_price(minimal: Path) -> None:
    remote = ["teacher.provider=openai", "teacher.model=gpt-x", "limits.budget_usd=5"]
    with pytest.raises(ConfigError, match=r"prices has no entry for teacher\.model 'gpt-x'"):
        load_config(minimal, remote)
    cfg = load_config(minimal, [*remote, "prices={gpt-x: {input: 1, output: 2}}"])
    assert cfg.limits.budget_usd == 5


def test_the_price_check_and_the_client_agree_on_which_endpoints_are_free(minimal: Path) -> None:
    from builder.llm.budget import Budget
    from builder.llm.client import LLMClient, is_paid
    from builder.llm.fake import FakeProvider

    here = ["teacher.provider=openai", "teacher.model=gpt-x", "limits.budget_usd=5"]
    cfg = load_config(minimal, [*here, "teacher.base_url=http://127.0.0.1:8080/v1"])
    provider = FakeProvider(model="gpt-x")
    provider.provider, provider.base_url = "openai", cfg.teacher.base_url
    assert not is_paid(provider)  # the config passed without a price: the client agrees
    LLMClient(provider, budget=Budget(max_usd=5))  # no "has no price" error
    with pytest.raises(ConfigError, match="prices has no entry"):
        load_config(minimal, [*here, "teacher.base_url=https://llm.example.com/v1"])


def test_relative_inputs_resolve_against_the_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "project"
    (folder / "data").mkdir(parents=True)
    path = _config(
        folder,
        "inputs:\n  - data/\n  - path: 'logs/*.jsonl'\n  - owner/dataset\n  - ./owner/local\n"
        "  - path: hf://datasets/owner/x\noutput: {dir: out}\ncache: {dir: ~/nap-cache}\n",
    )
    monkeypatch.chdir(tmp_path)
    cfg = load_config(path)
    assert [i.path for i in cfg.inputs] == [
        str(folder / "data"),
        str(folder / "logs" / "*.jsonl"),
        "owner/dataset",  # does not exist locally: a Hub id
        str(folder / "owner" / "local"),
        "hf://datasets/owner/x",
    ]
    assert cfg.output.dir == str(folder / "out")
    assert cfg.cache_dir() == Path("~/nap-cache").expanduser()


def test_hash_is_stable_and_tracks_only_what_changes_the_output(tmp_path: Path) -> None:
    one = _config(tmp_path, "inputs: [d/]\ngate: {threshold: 0.6, top_k: 2}\nseed: 3\n", "a.yaml")
    two = _config(tmp_path, "seed: 3\ngate: {top_k: 2, threshold: 0.6}\ninputs: [d/]\n", "b.yaml")
    base = config_hash(load_config(one))
    assert len(base) == 12 and int(base, 16) >= 0
    assert config_hash(load_config(one)) == base
    assert config_hash(load_config(two)) == base
    assert config_hash(load_config(one, ["gate.threshold=0.65"])) != base
    unchanged = ["limits.concurrency=64", "output.progress=false", "agent.api_key_env=MY_KEY"]
    assert config_hash(load_config(one, unchanged)) == base


def test_a_local_server_on_another_port_keeps_the_hash_a_remote_host_does_not(
    tmp_path: Path,
) -> None:
    path = _config(tmp_path, "inputs: [d/]\nagent: {provider: openai, model: m}\n")
    here = [f"agent.base_url=http://127.0.0.1:{port}/v1" for port in (8080, 9191)]
    assert config_hash(load_config(path, [here[0]])) == config_hash(load_config(path, [here[1]]))
    assert config_hash(load_config(path, ["agent.base_url=http://localhost:7000/v1"])) == (
        config_hash(load_config(path, [here[0]]))
    )
    remote = [f"agent.base_url=https://{host}/v1" for host in ("a.example.com", "b.example.com")]
    assert config_hash(load_config(path, [remote[0]])) != config_hash(
        load_config(path, [remote[1]])
    )


def test_the_resolved_dump_round_trips_to_the_same_config(minimal: Path) -> None:
    cfg = load_config(minimal, ["teacher.rules=[head_tail]", "gate.similarity=exact"])
    again = validate_config(yaml.safe_load(dump_resolved(cfg)))
    assert again == cfg
    assert config_hash(again) == config_hash(cfg)
    assert isinstance(again, PipelineConfig)


def test_every_field_has_a_description() -> None:
    from pydantic import BaseModel

    seen: set[type[BaseModel]] = set()
    pending: list[type[BaseModel]] = [PipelineConfig]
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"
            for arg in _types_in(field.annotation):
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    pending.append(arg)
        assert model.model_config.get("extra") == "forbid"
    assert len(seen) >= 14


def _types_in(annotation: object) -> list[object]:
    from typing import get_args

    found = [annotation]
    for arg in get_args(annotation):
        found += _types_in(arg)
    return found


def test_publish_licence_and_visibility_settings(minimal: Path) -> None:
    cfg = load_config(minimal)
    assert (cfg.publish.license, cfg.publish.private) == ("unknown", None)
    with pytest.raises(ConfigError, match="not a Hub licence id"):
        load_config(minimal, ["publish.license=MIT License"])
    with pytest.raises(ConfigError, match="license_name and license_link"):
        load_config(minimal, ["publish.license=other"])
    other = load_config(
        minimal,
        [
            "publish.license=other",
            "publish.license_name=nap-data",
            "publish.license_link=LICENSE.md",
        ],
    )
    assert other.publish.license_link == "LICENSE.md"
    assert load_config(minimal, ["publish.private=false"]).publish.private is False


@pytest.mark.parametrize(
    ("agent", "named"),
    [
        ("agent.provider=anthropic", "'anthropic' offers none"),
        ("agent.provider=openai", "OpenAI chat API"),
        ("agent.provider=local-server", "llama.cpp server"),
        ("agent.base_url=http://127.0.0.1:8000/v1", "gate.likelihood_api"),
    ],
)
def test_likelihood_on_an_endpoint_without_prompt_logprobs_names_the_key(
    minimal: Path, agent: str, named: str
) -> None:
    overrides = ["gate.mode=likelihood", agent]
    if "base_url" in agent:
        overrides.append("agent.provider=openai")
    with pytest.raises(ConfigError) as error:
        load_config(minimal, overrides)
    assert "gate.mode: likelihood" in str(error.value) and named in str(error.value)


def test_likelihood_settings_load_where_prompt_logprobs_exist(minimal: Path) -> None:
    cfg = load_config(minimal, ["gate.mode=likelihood", "agent.provider=local"])
    assert (cfg.gate.likelihood_score, cfg.gate.likelihood_threshold) == ("mean", 0.5)
    served = load_config(
        minimal,
        [
            "gate.mode=likelihood",
            "agent.provider=openai",
            "agent.base_url=http://127.0.0.1:8000/v1",
            "gate.likelihood_api=sglang",
            "gate.likelihood_score=grounded",
            "gate.control_floor=0.9",
        ],
    )
    assert served.gate.likelihood_api == "sglang" and served.gate.control_floor == 0.9
    assert load_config(minimal).gate.mode == "generate"


def test_the_control_floor_leaves_the_hash_the_control_and_gate_mode_do_not(minimal: Path) -> None:
    base = config_hash(load_config(minimal))
    assert config_hash(load_config(minimal, ["gate.control_floor=0.9"])) == base
    assert config_hash(load_config(minimal, ["gate.control=judged"])) != base
    likely = ["gate.mode=likelihood", "agent.provider=local"]
    assert config_hash(load_config(minimal, likely)) != config_hash(
        load_config(minimal, ["agent.provider=local"])
    )
