"""Credentials known by the command or header they stand in (beyond `context`'s forms).

`Authorization:` with any scheme (`Token`, `Bot`, `SSWS`, `GenieKey`, none), headers named for
a key, token, secret or signature (`X-Auth-Key:`, `X-Vault-Token:`, `PRIVATE-TOKEN:`),
`curl -u user:password`, `docker login -p password`, `.npmrc` `_auth=` and `.pgpass` lines.
References (`$TOKEN`, `${X}`, `{{ t }}`, `<your-token>`) and placeholders are left alone.
"""

from __future__ import annotations

import re

from builder.scrub.entropy import looks_random
from builder.scrub.rule import Rule, mixed, secret_value

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SECRET_HEADER = (
    r"(?:x-[a-z0-9\-]*?(?:key|token|secret|password|passwd|signature|auth|credentials?)"
    r"|private-token|access-token|auth-token|api-token|apitoken)"
)
_VALUE = r"""\\?["']?\s*:\s*\\?["']?(?![$%{<\[(])([a-z0-9._~+/=\-]{8,})"""


def token_like(value: str) -> bool:
    """A header or argument value that is a credential, not a word or a reference."""
    if not secret_value(value):
        return False
    return mixed(value) or looks_random(value) or _UUID.fullmatch(value) is not None


def _docker_style_auth(value: str) -> bool:
    import base64
    import binascii

    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


_HTTP_CLIENT = re.compile(r"\b(?:curl|wget|http|https|xh)\b")


def _http_client(subject: str, match: re.Match[str], value: str) -> bool:
    """`-u user:password` only on the command line of an HTTP client (not `git push -u`)."""
    line_start = subject.rfind("\n", 0, match.start()) + 1
    return _HTTP_CLIENT.search(subject, line_start, match.start()) is not None


_REGISTRY_LOGIN = re.compile(r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras)\b.*?\blogin\b")


def _registry_login(subject: str, match: re.Match[str], value: str) -> bool:
    """`-p password` only after `docker login` (and its kin) on the same line."""
    line_start = subject.rfind("\n", 0, match.start()) + 1
    return _REGISTRY_LOGIN.search(subject, line_start, match.start()) is not None


_HEADER_START = re.compile(r"x-|private-token|access-token|auth-token|api-?token")


def _header_starts(lower: str) -> list[int]:
    return [m.start() for m in _HEADER_START.finditer(lower)]


def rules() -> list[Rule]:
    return [
        Rule(
            "authorization_header",
            re.compile(
                r"authorization\\?[\"']?\s*[:=]\s*\\?[\"']?"
                r"(?:(?!basic\b|bearer\b)[a-z][a-z0-9\-]{1,20}[ \t]+)?"
                r"(?![$%{<\[(])([a-z0-9._~+/=\-]{8,})"
            ),
            group=1,
            check=token_like,
            hints=("authorization",),
            lower=True,
        ),
        Rule(
            "secret_header",
            re.compile(_SECRET_HEADER + _VALUE),
            group=1,
            check=token_like,
            bounded=True,
            starts=_header_starts,
            hints=("key", "token", "secret", "pass", "signature", "auth", "credential"),
            lower=True,
        ),
        Rule(
            "cli_password",
            re.compile(
                r"(?<![A-Za-z0-9_\-])(?:-u|--user|-a|--auth|--proxy-user)(?:[ \t]+|=)"
                r"""(?:'[^'\s:]+:([^'\s]+)'|"[^"\s:]+:([^"\s\\]+)"|[^\s'"\\:]+:([^\s'"\\]+))"""
            ),
            group=(1, 2, 3),
            check=secret_value,
            vet=_http_client,
            hints=("-u", "--user", "-a", "--auth", "--proxy-user"),
        ),
        Rule(
            "cli_password",
            re.compile(r"-p(?:[ \t]+|=)" + r"""(?:'([^'\n]+)'|"([^"\n\\]+)"|([^\s'"\\|;&]+))"""),
            group=(1, 2, 3),
            check=secret_value,
            vet=_registry_login,
            bounded=True,
            hints=("-p",),
        ),
        Rule(
            "npmrc_auth",
            re.compile(r"_(?:auth|password)\s*=\s*([a-z0-9+/]{8,}={0,2})"),
            group=1,
            check=_docker_style_auth,
            bounded=True,
            hints=("_auth", "_password"),
            lower=True,
        ),
        Rule(
            "pgpass_password",
            re.compile(
                r"^[A-Za-z0-9.\-*\[\]]+:(?:\d{1,5}|\*):[^:\s]+:[^:\s]+:([^\s]{4,})$", re.MULTILINE
            ),
            group=1,
            check=secret_value,
            hints=(":",),
        ),
    ]
