"""Build the teacher and agent clients a pipeline config asks for.

Both roles share one request cache, one budget and one usage ledger; when both use the
embedded model they share one model (one in-process `Llama` or one managed server).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from builder.config import EndpointConfig, PipelineConfig
from builder.errors import ConfigError
from builder.llm.batch.queue import BatchQueue
from builder.llm.budget import Budget, ledger_path
from builder.llm.cache import RequestCache
from builder.llm.client import LLMClient
from builder.llm.limits import EndpointLimits, RetryPolicy
from builder.llm.openai_provider import OpenAIProvider
from builder.llm.protocol import ChatProvider, ChatRequest, ChatResponse
from builder.llm.scoring import LikelihoodProvider, Scorer
from builder.llm.usage import ModelPrice, PriceTable, UsageLedger


@dataclass
class Clients:
    teacher: LLMClient
    agent: LLMClient
    usage: UsageLedger
    cache: RequestCache | None
    budget: Budget
    _stack: ExitStack = field(default_factory=ExitStack)
    batch: BatchQueue | None = None
    scorer: Scorer | None = None  # prompt log-probabilities, only for gate.mode: likelihood
    extra: dict[str, LLMClient] = field(default_factory=dict)  # by role, e.g. `compressor`

    def close(self) -> None:
        self._stack.close()

    async def aclose(self) -> None:
        """Close every role's HTTP connections, once per provider, on the loop that opened
        them (aiohttp sessions left open warn at exit and hold sockets)."""
        clients = (self.teacher, self.agent, *self.extra.values())
        for client in {id(c.provider): c for c in clients}.values():
            await client.aclose()
        close_scorer = getattr(self.scorer, "aclose", None)
        if close_scorer is not None:
            await close_scorer()


def _provider(
    endpoint: EndpointConfig, cfg: PipelineConfig, shared: dict[str, ChatProvider], stack: ExitStack
) -> ChatProvider:
    if isinstance(endpoint.base_url, list):  # replicas of one model: route between them
        from builder.llm.routing import RoutedProvider

        return RoutedProvider(
            [
                _provider(endpoint.model_copy(update={"base_url": url}), cfg, shared, stack)
                for url in endpoint.base_url
            ]
        )
    timeout = cfg.limits.timeout_s
    if endpoint.provider == "local":
        if "local" not in shared:
            from builder.llm.local.inprocess import LocalProvider

            shared["local"] = LocalProvider(model=endpoint.model)
        return shared["local"]
    if endpoint.provider == "local-server" and endpoint.base_url is None:
        if "local-server" not in shared:
            from builder.llm.local.server import ManagedLlamaServer
            from builder.llm.local.supervised import SupervisedServerProvider

            server = stack.enter_context(ManagedLlamaServer(model=endpoint.model))

            def connect(url: str) -> OpenAIProvider:
                provider = OpenAIProvider(server.model, base_url=url, timeout=timeout)
                # llama_cpp.server refuses `json_schema` and compiles `json_object` + schema
                # into a grammar: start with the dialect that constrains it
                provider.capabilities.response_format = "json_object"
                return provider

            shared["local-server"] = SupervisedServerProvider(server, connect)
        return shared["local-server"]
    if endpoint.provider == "anthropic":
        from builder.llm.anthropic_provider import AnthropicProvider  # a 1-3 s import: lazily

        key_env = endpoint.api_key_env or "ANTHROPIC_API_KEY"
        return AnthropicProvider(
            endpoint.model,
            base_url=endpoint.base_url,
            timeout=timeout,
            api_key_env=key_env,
            transport=endpoint.transport,
        )
    key_env = endpoint.api_key_env or "OPENAI_API_KEY"
    return OpenAIProvider(
        endpoint.model,
        base_url=endpoint.base_url,
        api_key_env=key_env,
        timeout=timeout,
        transport=endpoint.transport,
        reasoning_effort=endpoint.reasoning_effort,
    )


def price_table(cfg: PipelineConfig) -> PriceTable:
    """The config's prices as the client uses them."""
    return PriceTable(
        {
            name: ModelPrice(p.input, p.output, p.cached_input, p.cache_write, p.cache_write_1h)
            for name, p in cfg.prices.items()
        }
    )


COMPRESSOR_ROLE = "compressor"  # the `Clients.extra` key of a trained compressor's client


def build_clients(
    cfg: PipelineConfig, out_dir: Path, extra: Mapping[str, EndpointConfig] | None = None
) -> Clients:
    """Teacher and agent clients with the config's cache, limits, retries, prices and budget;
    `extra` endpoints (by role) get clients sharing all of them, in `Clients.extra` (the
    `compressor:` block is one when `replay.prefix_compressor` is `endpoint`)."""
    if cfg.replay.prefix_compressor == "endpoint" and cfg.compressor is not None:
        extra = {COMPRESSOR_ROLE: cfg.compressor, **(extra or {})}
    stack = ExitStack()
    shared: dict[str, ChatProvider] = {}
    cache = None
    if cfg.cache.enabled:
        cache_dir = Path(cfg.cache.dir) if cfg.cache.dir else out_dir / "cache"
        cache = RequestCache(cache_dir / "requests.sqlite")
        stack.callback(cache.close)  # writes the answers not yet written
    prices = price_table(cfg)
    budget = Budget(
        max_usd=cfg.limits.budget_usd,
        max_tokens=cfg.limits.budget_tokens,
        path=ledger_path(out_dir),
    )
    stack.callback(budget.save)
    usage = UsageLedger()
    retry = RetryPolicy(
        max_attempts=cfg.limits.max_retries + 1, max_retry_after_s=cfg.limits.max_retry_after_s
    )
    limits_by_endpoint: dict[tuple[str, str | None], EndpointLimits] = {}

    def client(
        endpoint: EndpointConfig, provider: ChatProvider, batch: BatchQueue | None, role: str
    ) -> LLMClient:
        key = (provider.provider, provider.base_url)
        if key not in limits_by_endpoint:
            limits_by_endpoint[key] = EndpointLimits(
                max_in_flight=cfg.limits.concurrency,
                rpm=cfg.limits.requests_per_minute,
                tpm=cfg.limits.tokens_per_minute,
            )
        return LLMClient(
            provider,
            cache=cache,
            limits=limits_by_endpoint[key],
            retry=retry,
            prices=prices,
            budget=budget,
            usage=usage,
            batch=batch,
            role=role,
            deadline_s=cfg.limits.timeout_s,
        )

    roles = {"teacher": cfg.teacher, "agent": cfg.agent}
    providers = {role: _provider(endpoint, cfg, shared, stack) for role, endpoint in roles.items()}
    batch = _batch_queue(cfg, out_dir, providers, cache, usage, prices, budget)
    teacher = client(cfg.teacher, providers["teacher"], batch, "teacher")
    agent = client(cfg.agent, providers["agent"], batch, "agent")
    scorer = None
    if cfg.gate.mode == "likelihood":
        scorer = Scorer(
            likelihood_provider(cfg, shared),
            limits=limits_by_endpoint[(agent.provider.provider, agent.provider.base_url)],
            retry=retry,
            budget=budget,
            price=prices.get(agent.provider.model),
            usage=usage,
            deadline_s=cfg.limits.timeout_s,
        )
    clients = Clients(teacher, agent, usage, cache, budget, stack, batch=batch, scorer=scorer)
    clients.extra = {
        role: client(endpoint, _provider(endpoint, cfg, shared, stack), None, role)
        for role, endpoint in (extra or {}).items()
    }
    return clients


def _batch_queue(
    cfg: PipelineConfig,
    out_dir: Path,
    providers: dict[str, ChatProvider],
    cache: RequestCache | None,
    usage: UsageLedger,
    prices: PriceTable,
    budget: Budget,
) -> BatchQueue | None:
    """The batch queue of the roles with `batch: true` (None when no role is batched)."""
    if not (cfg.teacher.batch or cfg.agent.batch):
        return None  # before the imports: the Anthropic SDK alone costs 1-2 s of CPU to load
    from builder.llm.admission import (
        CHARS_PER_TOKEN_WORST,
        DEFAULT_COMPLETION_ESTIMATE,
        prompt_estimate,
    )
    from builder.llm.batch.anthropic_batch import AnthropicBatch
    from builder.llm.batch.backend import BATCH_DISCOUNT, BatchBackend
    from builder.llm.batch.ledger import BatchLedger
    from builder.llm.batch.openai_batch import OpenAIBatch
    from builder.llm.batch.queue import BatchQueue, PollPolicy

    endpoints = {"teacher": cfg.teacher, "agent": cfg.agent}
    backends: dict[str, BatchBackend] = {}
    for role, endpoint in endpoints.items():
        if not endpoint.batch:
            continue
        provider = providers[role]
        if isinstance(provider, OpenAIProvider):
            backends[role] = OpenAIBatch(provider)
        elif endpoints[role].provider == "anthropic":
            from builder.llm.anthropic_provider import AnthropicProvider

            assert isinstance(provider, AnthropicProvider)
            backends[role] = AnthropicBatch(provider)
    if not backends:
        return None
    if cache is None:
        raise ConfigError("batch: true needs the request cache (cache.enabled: true)")

    def on_answer(role: str, stage: str, response: ChatResponse) -> float:
        cost = prices.cost(providers[role].model, response.usage) * BATCH_DISCOUNT
        usage.stage(stage).add_usage(response.usage, cost)
        return cost

    def worst_case(role: str, request: ChatRequest) -> tuple[float, int]:
        """The online gate's worst case (prompt at 3 characters a token), at batch prices."""
        prompt = prompt_estimate(request, CHARS_PER_TOKEN_WORST)
        completion = request.n * (request.max_tokens or DEFAULT_COMPLETION_ESTIMATE)
        price = prices.get(providers[role].model)
        usd = price.worst_case(prompt, completion) * BATCH_DISCOUNT if price is not None else 0.0
        return usd, prompt + completion

    ledger = BatchLedger(out_dir / "_state" / "batches.sqlite")
    poll = PollPolicy(first_s=cfg.limits.batch_poll_s, max_s=cfg.limits.batch_poll_max_s)
    return BatchQueue(
        ledger, cache, backends, poll=poll, on_answer=on_answer, budget=budget,
        worst_case=worst_case,
    )  # fmt: skip


def likelihood_provider(cfg: PipelineConfig, shared: dict[str, ChatProvider]) -> LikelihoodProvider:
    """The agent endpoint's prompt log-probabilities (the config validator already refused
    endpoints that have none)."""
    agent = cfg.agent
    if agent.provider == "local":
        local = shared["local"]
        assert isinstance(local, LikelihoodProvider)
        return local
    from builder.llm.scoring_http import SGLangLikelihood, VLLMLikelihood

    url = agent.primary_url  # with replicas, log-probabilities come from the first one
    assert url is not None
    kind = SGLangLikelihood if cfg.gate.likelihood_api == "sglang" else VLLMLikelihood
    return kind(
        agent.model,
        base_url=url,
        api_key_env=agent.api_key_env or "OPENAI_API_KEY",
        timeout=cfg.limits.timeout_s,
    )
