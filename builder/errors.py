"""The exception hierarchy.

NapError
├── ConfigError          bad pipeline config or CLI value: fail fast at start-up
├── InputError           a file or record that cannot be ingested: quarantined, run goes on
│   ├── UnknownFormatError
│   └── RecordError
├── LLMError             anything from a model endpoint
│   ├── TransientLLMError   429, 5xx, timeout, dropped connection: retried with backoff
│   ├── PermanentLLMError   other 4xx (auth, bad request): fail fast, says what to fix
│   │   └── QuotaExceededError  429 insufficient_quota: the account is out of credit
│   └── BudgetExceededError the run-wide budget is spent: stop scheduling new work
└── PublishError         dataset layout or upload problem
"""

from __future__ import annotations


class NapError(Exception):
    """Base class for every error nap-builder raises on purpose."""


class ConfigError(NapError):
    """A config key has a wrong value; the message names the key and the allowed values."""


class InputError(NapError):
    """A file or record cannot be used. `kind` is a short machine-readable category."""

    kind = "input_error"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class UnknownFormatError(InputError):
    kind = "unknown_format"


class RecordError(InputError):
    kind = "wrong_shape"


class LLMError(NapError):
    """A model request failed. `kind` is a short category for usage reports ("rate_limit"...)."""

    kind = "llm_error"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class TransientLLMError(LLMError):
    """Worth retrying; `retry_after` (seconds) is the server's hint when it gave one."""

    kind = "transient"

    def __init__(
        self, message: str, *, retry_after: float | None = None, kind: str | None = None
    ) -> None:
        super().__init__(message, kind=kind)
        self.retry_after = retry_after


class PermanentLLMError(LLMError):
    """Retrying will not help; the message says what to fix."""

    kind = "permanent"


class QuotaExceededError(PermanentLLMError):
    """The provider account has no quota left (a 429 that waiting does not cure)."""

    kind = "quota"


class BudgetExceededError(LLMError):
    """The run-wide USD or token budget is spent."""

    kind = "budget"


class PublishError(NapError):
    """The dataset cannot be laid out or uploaded."""
