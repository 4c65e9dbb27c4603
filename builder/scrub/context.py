"""Context rules: a secret known by where it stands, not by its shape.

URLs with a password, connection strings, SAS signatures, auth and API-key headers, docker
registry auth, `.netrc` and command-line flags (`--password v`, `-p'v'`, `mysql -pv`).
Assignments to secret-sounding names (env, code, YAML, INI) are in `keywords`.
"""

from __future__ import annotations

import base64
import binascii
import re

from builder.scrub.entropy import looks_random
from builder.scrub.rule import (
    Rule,
    cli_value,
    mixed,
    mixed_secret,
    secret_value,
)

_CLI_WORDS = r"(?:password|passwd|passphrase|pass|pwd|token|api-?key|secret)"


def _not_a_word(subject: str, match: re.Match[str], value: str) -> bool:
    """`--password requires ...` in help text: an unquoted lowercase word after a space is
    prose; `--password=word` and quoted values are taken as given."""
    spaced = match.group(3) is not None and subject[match.start(3) - 1] in " \t"
    return not (spaced and value.isalpha() and value.islower())


def _docker_auth(value: str) -> bool:
    """A docker config `auth`: base64 of `user:password`."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


_CLI_VALUE = r"""(?:'([^'\n\\]{1,300})'|\\?"([^"\n\\]{1,300})\\?"|([^\s'"\\;|&<>()]+))"""


def rules() -> list[Rule]:
    """Context rules, most specific first (on overlapping matches the earlier rule wins)."""
    return [
        Rule(
            "url_password",
            re.compile(
                r"://[^:/?#@\s'\"\\]*:"
                r"((?![$%{<\[])[^@/?#\s'\"\\]+)@(?=[A-Za-z0-9\[])"
            ),
            group=1,
            hints=("://",),
        ),
        Rule(
            "connection_string_password",
            re.compile(r";\s*(?:password|pwd)\s*=\s*((?![$%{<\[])[^;'\"\s\\]{4,})"),
            group=1,
            hints=("password", "pwd"),
            lower=True,
        ),
        Rule(
            "azure_shared_access_key",
            re.compile(r"sharedaccess(?:key|signature)=([a-z0-9+/=%]{32,})"),
            group=1,
            hints=("sharedaccess",),
            lower=True,
        ),
        # `--password v`, `--db-password=v`, `--api-key "v"` (not `--password PASSWORD`).
        Rule(
            "cli_password",
            re.compile(r"--(?:[a-z0-9]+-)*" + _CLI_WORDS + r"(?:=|[ \t]+)" + _CLI_VALUE),
            group=(1, 2, 3),
            check=cli_value,
            vet=_not_a_word,
            hints=("--",),
            lower=True,
        ),
        # `-p'v'` / `-p"v"`, and the unquoted `-pv` of the MySQL clients and `sshpass -p v`.
        Rule(
            "cli_password",
            re.compile(r"""-p(?:'([^'\s\\]{1,200})'|\\?"([^"\s\\]{1,200})\\?")"""),
            group=(1, 2),
            check=secret_value,
            bounded=True,
            hints=("-p'", '-p"', '-p\\"'),
        ),
        Rule(
            "cli_password",
            re.compile(
                r"(?:mysql|mariadb|mysqldump|mysqladmin|mysqlimport|mysqlsh)\b[^\n|;&]*?"
                r"[ \t]-p([^\s'\"\\|;&]+)|sshpass\s+-p\s*([^\s'\"\\|;&]+)"
            ),
            group=(1, 2),
            check=secret_value,
            bounded=True,
            hints=("mysql", "mariadb", "sshpass"),
        ),
        Rule(
            "azure_sas_token",
            re.compile(r"[?&]sig=([A-Za-z0-9%+/]{40,}(?:%3[Dd]|=)*)"),
            group=1,
            hints=("sig=",),
        ),
        Rule(
            "bearer_token",
            re.compile(r"Bearer\s+([A-Za-z0-9._~+/\-]{20,}=*)"),
            group=1,
            check=mixed,
            bounded=True,
            hints=("bearer",),
        ),
        Rule(
            "basic_auth_header",
            re.compile(r"authorization\\?[\"']?\s*[:=]\s*\\?[\"']?basic\s+([a-z0-9+/]{12,}={0,2})"),
            group=1,
            hints=("authorization",),
            lower=True,
        ),
        Rule(
            "api_key_header",
            re.compile(
                r"(?:x-api-key|x-goog-api-key|x-auth-token|x-access-token|api-key|apikey)"
                r"\\?[\"']?\s*[:=]\s*\\?[\"']?([a-z0-9._~+/\-]{16,})"
            ),
            group=1,
            check=lambda v: mixed_secret(v) or looks_random(v),
            hints=("api-key", "apikey", "-token"),
            lower=True,
        ),
        Rule(
            "docker_registry_auth",
            re.compile(r"\\?\"auth\\?\"\s*:\s*\\?\"([a-z0-9+/]{8,}={0,2})\\?\""),
            group=1,
            check=_docker_auth,
            hints=('auth\\"', 'auth"'),
            lower=True,
        ),
        Rule(
            "session_cookie",
            re.compile(r"_gitlab_session=([0-9a-f]{32})"),
            group=1,
            hints=("_gitlab_session=",),
        ),
        Rule(
            "netrc_password",
            re.compile(r"""machine\s+\S+\s+(?:login\s+\S+\s+)?password\s+([^\s'"\\]+)"""),
            group=1,
            check=secret_value,
            bounded=True,
            hints=("machine",),
            lower=True,
        ),
    ]
