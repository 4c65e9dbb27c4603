"""Secret detection and redaction for text sent to remote models or published.

Detection reuses the regexes of the `detect-secrets` plugins (maintained, tested against real
token formats) and adds patterns for formats it lacks (OpenAI project keys, Anthropic, Hugging
Face, Google, ...). Its entropy and keyword plugins are not used: they flag git SHAs, sha256
digests and ordinary code, and we redact text rather than report findings.

Every pattern is bounded so that a token is only matched as a whole word, and every replacement
(`[REDACTED:<kind>]`) contains no quote or backslash, so JSON text (tool-call arguments) stays
valid JSON after scrubbing.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from schemas.steps import Action, StepRecord
from schemas.trajectories import Message, TrajectoryRecord

PLACEHOLDER = "[REDACTED:{kind}]"

_L = r"(?<![A-Za-z0-9_\-])"  # left word boundary for tokens (hyphen and underscore count)
_R = r"(?![A-Za-z0-9_\-])"


@dataclass(frozen=True, slots=True)
class Rule:
    """One detector: `group` is the part of the match replaced; `check` vets the match."""

    kind: str
    regex: re.Pattern[str]
    group: int = 0
    check: Callable[[str], bool] | None = None


def _bounded(pattern: re.Pattern[str] | str, flags: int = 0) -> re.Pattern[str]:
    text = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    extra = pattern.flags & re.IGNORECASE if isinstance(pattern, re.Pattern) else 0
    return re.compile(f"{_L}(?:{text}){_R}", flags | extra)


def _mixed(value: str) -> bool:
    """Random tokens mix letters and digits; identifiers and words rarely do."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _mixed_case(value: str) -> bool:
    return _mixed(value) and any(c.isupper() for c in value) and any(c.islower() for c in value)


_PLACEHOLDER_VALUES = {"none", "null", "true", "false", "changeme", "redacted", "undefined"}


def _secret_value(value: str) -> bool:
    """An assigned value that is a literal secret, not a reference, placeholder or flag."""
    if value.lower() in _PLACEHOLDER_VALUES or value[0] in "$%{<[(/.*":
        return False
    return not set(value) <= {"x", "X", "*", "-", "_", "."}


def _library_rules() -> list[Rule]:
    """Rules made from detect-secrets plugin regexes (wrapped with word boundaries)."""
    aws_id, aws_secret = AWSKeyDetector.denylist
    slack_token, slack_hook = SlackDetector.denylist
    rules = [
        Rule("aws_access_key", _bounded(aws_id)),
        Rule("aws_secret_key", aws_secret, group=1),
        Rule("slack_token", _bounded(slack_token)),
        Rule("slack_webhook", slack_hook),
        Rule("openai_key", _bounded(OpenAIDetector.denylist[0])),
        Rule("sendgrid_key", _bounded(SendGridDetector.denylist[0])),
        Rule("azure_storage_key", AzureStorageKeyDetector.denylist[0]),
        Rule("square_oauth_secret", _bounded(SquareOAuthDetector.denylist[0])),
        Rule("telegram_bot_token", _bounded(TelegramBotTokenDetector.denylist[0])),
        Rule("mailchimp_key", _bounded(MailchimpDetector.denylist[0])),
        Rule("npm_token", NpmDetector.denylist[0], group=1),
        Rule("discord_bot_token", _bounded(DiscordBotTokenDetector.denylist[0]), check=_mixed),
    ]
    rules += [Rule("github_token", _bounded(p)) for p in GitHubTokenDetector.denylist]
    rules += [Rule("gitlab_token", _bounded(p)) for p in GitLabTokenDetector.denylist]
    rules += [Rule("pypi_token", _bounded(p)) for p in PypiTokenDetector.denylist]
    rules += [Rule("stripe_key", _bounded(p)) for p in StripeDetector.denylist]
    rules += [Rule("twilio_key", _bounded(p), check=_mixed) for p in TwilioKeyDetector.denylist]
    return rules


_ENV_NAME = (
    r"[A-Z0-9_]*(?<![A-Z0-9])(?:SECRET|PASSWORD|PASSWD|PASSPHRASE|TOKEN|API_?KEY|ACCESS_KEY"
    r"|PRIVATE_KEY|SECRET_KEY|CREDENTIALS?|AUTH_KEY)(?![A-Z0-9])[A-Z0-9_]*"
)
_CODE_NAME = (
    r"[A-Za-z0-9_.\-]*(?:password|passwd|secret|token|api_?key|access_?key|auth_?key)"
    r"[A-Za-z0-9_\-]*"
)


def _own_rules() -> list[Rule]:
    """Formats detect-secrets lacks, plus context rules (URLs, assignments, headers)."""
    own = [
        ("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{20,}", None),
        ("openai_key", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", _mixed),
        ("huggingface_token", r"hf_[A-Za-z0-9]{30,}", _mixed_case),
        ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}", None),
        ("github_token", r"github_pat_[A-Za-z0-9_]{60,}", None),
        ("gitlab_token", r"glpat-[A-Za-z0-9_\-]{20,}", None),
        ("npm_token", r"npm_[A-Za-z0-9]{36}", _mixed),
        ("pypi_token", r"pypi-[A-Za-z0-9_\-]{50,}", None),
        ("stripe_key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}", None),
        ("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}", None),
        ("mailgun_key", r"key-[0-9a-f]{32}", None),
        ("slack_token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", None),
        ("jwt", r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}", None),
        ("azure_client_secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}", None),
        ("digitalocean_token", r"do[por]_v1_[a-f0-9]{64}", None),
        ("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", None),
    ]
    rules = [Rule(kind, _bounded(p), check=c) for kind, p, c in own]
    rules += [
        Rule(
            "private_key",
            re.compile(
                r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?"
                r"-----END \1PRIVATE KEY\2-----"
            ),
        ),
        # A truncated key block (no END line): redact the header and the base64 lines after it.
        Rule(
            "private_key",
            re.compile(
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
                r"(?:(?:\r?\n|\\n|\\r\\n)[A-Za-z0-9+/=:\- ]{8,})*"
            ),
        ),
        Rule("private_key", re.compile(r"PuTTY-User-Key-File-\d[^\n]*(?:\n[^\n]+){0,40}")),
        Rule(
            "url_password",
            re.compile(
                r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^:/?#@\s'\"\\]+:"
                r"((?![$%{<\[])[^@/?#\s'\"\\]+)@(?=[A-Za-z0-9\[])"
            ),
            group=1,
        ),
        Rule(
            "connection_string_password",
            re.compile(r"(?i)(?<=;)\s*(?:password|pwd)\s*=\s*((?![$%{<\[])[^;'\"\s\\]{4,})"),
            group=1,
        ),
        Rule(
            "azure_shared_access_key",
            re.compile(r"(?i)SharedAccess(?:Key|Signature)=([A-Za-z0-9+/=%]{32,})"),
            group=1,
        ),
        Rule("bearer_token", re.compile(r"\bBearer\s+([A-Za-z0-9._~+/\-]{20,}=*)"), group=1),
        Rule(
            "basic_auth_header",
            re.compile(
                r"(?i)authorization\\?[\"']?\s*[:=]\s*\\?[\"']?basic\s+([A-Za-z0-9+/]{12,}={0,2})"
            ),
            group=1,
        ),
        # `.env` / shell style: UPPER_CASE name with a secret word, `=` without spaces, a value.
        Rule(
            "env_secret",
            re.compile(
                rf"(?:(?<=\\n)|(?<![A-Za-z0-9_]))(?:export\s+)?{_ENV_NAME}=\\?['\"]?"
                r"([^\s'\"#\\()\[\]{}<>,]{6,})(?=$|[\s'\"#;&|)\\])"
            ),
            group=1,
            check=_secret_value,
        ),
        # Code and JSON: `password = "literal"`, `"api_key": "literal"` (a string literal only).
        Rule(
            "assigned_secret",
            re.compile(
                rf"(?i)(?<![A-Za-z0-9_]){_CODE_NAME}\\?['\"]?\s*(?::|=|:=|=>)\s*\\?['\"]"
                r"([^'\"\s\\]{8,})\\?['\"]"
            ),
            group=1,
            check=lambda v: _secret_value(v) and _mixed(v),
        ),
    ]
    return rules


EMAIL_RULE = Rule(
    "email",
    re.compile(
        r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"
    ),
)

# Token formats first, context rules last: on overlapping matches the earlier rule wins.
DEFAULT_RULES: tuple[Rule, ...] = (*_library_rules(), *_own_rules())


class Scrubber:
    """Redacts credentials (and, if asked, emails) and counts redactions per kind.

    `scrub` may be called from several threads: the counter update is locked. For process
    pools, give each worker its own Scrubber and `merge` the counts.
    """

    def __init__(self, emails: bool = False, rules: Iterable[Rule] = DEFAULT_RULES) -> None:
        self.rules: tuple[Rule, ...] = (*rules, EMAIL_RULE) if emails else tuple(rules)
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, kind) spans to redact, in text order."""
        found: list[tuple[int, int, int, str]] = []
        for priority, rule in enumerate(self.rules):
            for m in rule.regex.finditer(text):
                value = m.group(rule.group)
                if not value or (rule.check is not None and not rule.check(value)):
                    continue
                found.append((m.start(rule.group), m.end(rule.group), priority, rule.kind))
        found.sort(key=lambda s: (s[2], s[0]))
        chosen: list[tuple[int, int, str]] = []
        for start, end, _, kind in found:
            if all(end <= s or start >= e for s, e, _ in chosen):
                chosen.append((start, end, kind))
        return sorted(chosen)

    def scrub(self, text: str) -> str:
        """`text` with every detected secret replaced by `[REDACTED:<kind>]`."""
        if not text:
            return text
        spans = self.find(text)
        if not spans:
            return text
        parts: list[str] = []
        pos = 0
        for start, end, kind in spans:
            parts += [text[pos:start], PLACEHOLDER.format(kind=kind)]
            pos = end
        parts.append(text[pos:])
        self._count(kind for _, _, kind in spans)
        return "".join(parts)

    def scrub_optional(self, text: str | None) -> str | None:
        return None if text is None else self.scrub(text)

    def scrub_value(self, value: Any) -> Any:
        """Scrub every string inside nested lists / dicts (Arrow rows, JSON objects)."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.scrub_value(v) for k, v in value.items()}
        return value

    def scrub_message(self, message: Message) -> Message:
        """A copy of `message` with content, content parts and tool-call arguments scrubbed."""
        calls = [
            dataclasses.replace(c, arguments=self.scrub(c.arguments)) for c in message.tool_calls
        ]
        return dataclasses.replace(
            message,
            content=self.scrub(message.content),
            content_parts=self.scrub_optional(message.content_parts),
            tool_calls=calls,
        )

    def scrub_trajectory(self, record: TrajectoryRecord) -> TrajectoryRecord:
        """A copy with task, system prompt, metadata and every message scrubbed (ids kept)."""
        return dataclasses.replace(
            record,
            task=self.scrub_optional(record.task),
            system_prompt=self.scrub_optional(record.system_prompt),
            messages=[self.scrub_message(m) for m in record.messages],
            metadata=self.scrub(record.metadata),
        )

    def scrub_action(self, action: Action | None) -> Action | None:
        if action is None:
            return None
        return dataclasses.replace(
            action,
            arguments=self.scrub(action.arguments),
            command=self.scrub_optional(action.command),
            raw=self.scrub(action.raw),
        )

    def scrub_step(self, step: StepRecord) -> StepRecord:
        """A copy with the actions, thought, observation and focus question scrubbed."""
        return dataclasses.replace(
            step,
            action=self.scrub_action(step.action),
            next_action=self.scrub_action(step.next_action),
            thought=self.scrub_optional(step.thought),
            observation=self.scrub(step.observation),
            focus_question=self.scrub_optional(step.focus_question),
        )

    def merge(self, counts: Mapping[str, int]) -> None:
        """Add counts from another Scrubber (e.g. one per worker process)."""
        self._count_items(counts.items())

    def _count(self, kinds: Iterable[str]) -> None:
        self._count_items((k, 1) for k in kinds)

    def _count_items(self, items: Iterable[tuple[str, int]]) -> None:
        with self._lock:
            for kind, n in items:
                self.counts[kind] = self.counts.get(kind, 0) + n


def scrub_message(message: Message, scrubber: Scrubber | None = None) -> Message:
    """Module-level convenience for callers that do not keep counts."""
    return (scrubber or Scrubber()).scrub_message(message)
