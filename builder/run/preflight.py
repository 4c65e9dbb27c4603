"""Checks before anything is spent: inputs, output folder, budget, API keys, endpoints.

An ingest of a real corpus takes minutes, and a run used to find a mistyped path (an empty
run, exit 0), a missing key or a dead endpoint only after it. Every problem found here is
named with the key to fix, all at once, and the command stops with exit 2 before the ingest.
Endpoints are asked for their model list (free, read-only); any HTTP answer but 401/403 means
the server is there.
"""

from __future__ import annotations

import glob
import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from builder.config import PipelineConfig
from builder.config.endpoints import EndpointConfig
from builder.config.loading import resolve_input_path
from builder.errors import ConfigError
from builder.llm.budget import ledger_path
from builder.llm.endpoint_kinds import is_loopback, key_needed
from builder.storage.uri import is_remote

ANTHROPIC_URL = "https://api.anthropic.com"
OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


class PreflightError(ConfigError):
    """One or more problems found before the run; each line names one."""


@dataclass(frozen=True)
class Role:
    name: str  # teacher | agent | compressor
    endpoint: EndpointConfig


def roles_of(cfg: PipelineConfig, names: Iterable[str] = ("teacher", "agent")) -> list[Role]:
    """The endpoints a command will call (`compressor` only when configured)."""
    found = []
    for name in names:
        endpoint = getattr(cfg, name, None)
        if isinstance(endpoint, EndpointConfig):
            found.append(Role(name, endpoint))
    return found


def check_paths(paths: Iterable[tuple[str, str]]) -> list[str]:
    """(label, path) pairs whose local path does not exist, or whose glob matches nothing.
    Object-store URIs and Hub dataset ids are checked when read (credentials, network)."""
    problems = []
    for label, text in paths:
        path = resolve_input_path(text, Path.cwd())
        if "://" in path or not Path(path).is_absolute():
            continue  # a URI, or a Hub id
        if set("*?[") & set(path):
            if not glob.glob(path, recursive=True):
                problems.append(f"{label}: the pattern {path} matches no file")
        elif not os.path.exists(path):
            problems.append(f"{label}: {path} does not exist")
    return problems


def check_inputs(cfg: PipelineConfig) -> list[str]:
    return check_paths((f"inputs[{i}].path", spec.path) for i, spec in enumerate(cfg.inputs))


def check_output(cfg: PipelineConfig) -> list[str]:
    """The output folder can be created and written (a local one; a store needs credentials)."""
    if is_remote(cfg.output.dir):
        return []
    out = Path(cfg.output.dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-check-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        return [f"output.dir: cannot write to {out} ({exc.strerror or exc})"]
    return []


def check_budget(cfg: PipelineConfig) -> list[str]:
    """A budget this output folder has spent already would send nothing at all."""
    limit = cfg.limits.budget_usd
    path = ledger_path(Path(cfg.output.dir))
    if limit is None or is_remote(cfg.output.dir) or not path.exists():
        return []
    try:
        spent = float(json.loads(path.read_text()).get("spent_usd", 0.0))
    except (OSError, ValueError, TypeError, AttributeError):
        return []  # the run reports an unreadable ledger itself
    if spent >= limit:
        return [
            f"limits.budget_usd: ${spent:.4f} of ${limit:.4f} is spent in {cfg.output.dir} "
            "already; raise it (--set limits.budget_usd=...) to continue"
        ]
    return []


def key_env(endpoint: EndpointConfig) -> str | None:
    return endpoint.api_key_env or DEFAULT_KEY_ENV.get(endpoint.provider)


def check_keys(roles: Iterable[Role]) -> list[str]:
    """The API key variable of every endpoint that needs one is set (never read further)."""
    problems = []
    for role in roles:
        endpoint, env = role.endpoint, key_env(role.endpoint)
        urls = _urls(endpoint)
        if env and any(key_needed(endpoint.provider, u) for u in urls) and not os.environ.get(env):
            problems.append(
                f"{role.name}.api_key_env: the environment variable {env} is not set "
                f"({endpoint.provider} model {endpoint.model}); export it, or name another "
                f"variable with --set {role.name}.api_key_env=NAME"
            )
    return problems


def check_endpoints(roles: Iterable[Role], timeout_s: float = 5.0) -> list[str]:
    """Each remote endpoint answers its models-list request (once per distinct URL)."""
    problems, seen = [], set()
    for role in roles:
        endpoint = role.endpoint
        if endpoint.provider in ("local", "local-server") and endpoint.base_url is None:
            continue  # the embedded model, started by the run itself
        for url in _urls(endpoint):
            target = _models_url(endpoint.provider, url)
            if target in seen:
                continue
            seen.add(target)
            problem = _probe(target, endpoint, timeout_s)
            if problem:
                problems.append(f"{role.name}.base_url: {problem}")
    return problems


def _urls(endpoint: EndpointConfig) -> list[str | None]:
    return list(endpoint.base_url) if isinstance(endpoint.base_url, list) else [endpoint.base_url]


def _models_url(provider: str, base_url: str | None) -> str:
    if provider == "anthropic":
        return (base_url or ANTHROPIC_URL).rstrip("/") + "/v1/models"
    return (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/") + "/models"


def _probe(url: str, endpoint: EndpointConfig, timeout_s: float) -> str | None:
    env = key_env(endpoint)
    key = os.environ.get(env) if env else None
    headers = {"User-Agent": "nap-builder preflight"}
    if key and endpoint.provider == "anthropic":
        headers |= {"x-api-key": key, "anthropic-version": "2023-06-01"}
    elif key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            answer.read(1 << 16)
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return (
                f"{url} refused the API key in {env} (HTTP {exc.code}); check the key "
                "and that it may use this model"
            )
        return None  # it answered: a server without /models is still a server
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        local = " (on this machine: start it first)" if is_loopback(url) else ""
        return f"cannot reach {url} ({reason}); check the URL and that the server is running{local}"
    return None


def require_ready(
    cfg: PipelineConfig,
    *,
    role_names: Iterable[str] = ("teacher", "agent"),
    reach: bool = True,
) -> None:
    """Raise `PreflightError` naming every problem found, before anything is ingested."""
    names = list(role_names)
    if (
        cfg.replay.prefix_compressor == "endpoint"
        and "agent" in names
        and "compressor" not in names
    ):
        names.append("compressor")  # a run whose prefixes a trained compressor fills
    roles = roles_of(cfg, names)
    problems = check_inputs(cfg) + check_output(cfg) + check_budget(cfg) + check_keys(roles)
    if reach and not problems:  # no request to an endpoint whose key is missing
        problems += check_endpoints(roles)
    if problems:
        lines = "\n  ".join(problems)
        raise PreflightError(f"not started, nothing was ingested or sent:\n  {lines}")
