"""Credential families: rules for kinds no list names yet.

- `vendor_token`: a short vendor prefix, a separator and a long random run (`glsa_...`,
  `dp.pt....`, `ops_...`, `sq0atp-...`): the shape most vendors now give their tokens so that
  scanners can find them. The run must look random (upper, lower and digits changing class
  often, or a long hex run), and prefixes that name ids rather than secrets (`toolu_`,
  `call_`, `msg_`, `chatcmpl-`, Stripe object ids, publishable keys) are left alone: tool-call
  ids are the joints of a trajectory.
- `url_token`: a token used as the user name of a URL (`https://<token>@github.com`).
- `cli_login_token`: the token argument of a login command (`snyk auth <t>`, `wandb login <t>`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from builder.scrub.entropy import digest_like
from builder.scrub.rule import RIGHT_BOUNDARY, Rule

# Prefixes of ids, digests and public values (lowercase, first segment).
ID_PREFIXES = frozenset(
    {
        # LLM APIs: tool calls, messages, completions, requests, files, batches, runs
        "toolu", "srvtoolu", "call", "msg", "msgbatch", "req", "chatcmpl", "cmpl", "resp",
        "run", "thread", "asst", "file", "batch", "step", "vs", "ftjob", "ft", "modr", "proj",
        "org", "user", "span", "trace", "fc", "rs", "ws", "ctx", "compl",
        # Stripe object ids and publishable keys (public by design)
        "cus", "pi", "ch", "sub", "in", "price", "prod", "acct", "seti", "src", "pm", "cs",
        "po", "re", "txn", "evt", "tok", "card", "ba", "py", "il", "ii", "si", "pk", "pub",
        "public", "publishable",
        # digests, hashes and ids
        "sha", "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "blake2b", "h1", "id",
        "uuid", "guid", "hash", "digest", "checksum", "nonce", "etag", "commit", "build",
        # GitHub GraphQL node ids; OpenRouter generations; git packs; temporary files
        "pr", "ic", "br", "mdq", "mde", "prrc", "prr", "rt", "ra", "gen", "pack", "tmp", "temp",
    }
)  # fmt: skip
_GITHUB_NODE = ("kwDO", "kgDO", "kwHO", "kwDN", "kwAB")
# A value ending in a file extension names a file (`pack-<hash>.idx`, `tmp_<random>.json`).
FILE_EXTENSIONS = frozenset(
    [
        "idx",
        "pack",
        "json",
        "jsonl",
        "txt",
        "log",
        "gz",
        "zip",
        "tar",
        "tgz",
        "zst",
        "xz",
        "bz2",
        "py",
        "js",
        "ts",
        "whl",
        "so",
        "dll",
        "exe",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "pdf",
        "html",
        "css",
        "csv",
        "parquet",
        "md",
        "yaml",
        "yml",
        "toml",
        "lock",
        "bin",
        "dat",
        "db",
        "sqlite",
        "pkl",
        "pt",
        "safetensors",
        "onnx",
        "traj",
    ]
)
_SEGMENT = re.compile(r"[A-Za-z0-9]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = frozenset("0123456789abcdef")
# a version-4 UUID without its dashes (pip's build directories: `<project>_<uuid4 hex>`)
_UUID4_HEX = re.compile(r"[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}")


def _class(ch: str) -> int:
    return 0 if ch.isdigit() else 1 if ch.isupper() else 2


def random_run(run: str, hex_digests: bool = False) -> bool:
    """A run of letters and digits that reads as random, not as a name or a word: mixed
    case with a digit and a class change at most characters (random base62 changes class at
    ~62% of positions, CamelCase names at ~25%), one case with digits (base36), or a long hex
    run; a hex run shaped like an MD5 or SHA-1 digest only where `hex_digests` says the
    context makes it a token (after a vendor prefix, after `login`)."""
    if len(run) < 20:
        return False
    if set(run) <= _HEX:
        if digest_like(run) and not (hex_digests and len(run) in (32, 40)):
            return False
        return len(run) >= 32 and sum(c.isdigit() for c in run) >= 6
    if digest_like(run):
        return False
    digits = sum(c.isdigit() for c in run)
    changes = sum(_class(a) != _class(b) for a, b in itertools.pairwise(run))
    if run.islower() or run.isupper():  # one case and digits (base36 tokens)
        enough = digits >= max(4, len(run) // 8)
        return len(run) >= 32 and enough and changes >= 0.22 * (len(run) - 1)
    return digits >= 1 and changes >= 0.42 * (len(run) - 1)


def _vendor_vet(subject: str, match: re.Match[str], value: str) -> bool:
    prefix = match.group("prefix").lower()
    if prefix in ID_PREFIXES or _UUID.search(value):
        return False
    segments = _SEGMENT.findall(value)
    if (
        len(segments) > 2
        and value[-len(segments[-1]) - 1] == "."
        and (segments[-1].lower() in FILE_EXTENSIONS)
    ):
        return False
    runs = [s for s in segments[1:] if len(s) >= 20]
    if any(run.startswith(_GITHUB_NODE) for run in runs):
        return False
    if runs and all(_UUID4_HEX.fullmatch(run) for run in runs):
        return False  # `uuid.uuid4().hex`, an id like the dashed UUIDs above
    # `sqp_<40 hex>`, `dop_v1_<64 hex>`: a digest-shaped run is a token after a short prefix
    short = len(segments) <= 3 and segments[-1] == runs[-1] if runs else False
    return any(random_run(run, hex_digests=short) for run in runs)


def _url_user_vet(subject: str, match: re.Match[str], value: str) -> bool:
    return random_run(value) and not set(value) <= _HEX  # a hex user is a Sentry DSN key


_LOGIN_VALUE = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[A-Za-z0-9_\-.]{20,}"
)


def _login_vet(subject: str, match: re.Match[str], value: str) -> bool:
    if _UUID.fullmatch(value):
        return True
    return any(random_run(run, hex_digests=True) for run in _SEGMENT.findall(value))


_RUN = re.compile(r"[._\-][A-Za-z0-9]{20,}")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def _word_starts(text: str) -> Iterable[int]:
    """The start of each word holding a separator and a 20-character run: the only places a
    vendor token can start (a scan for the run is ~10x cheaper than trying every word)."""
    for match in _RUN.finditer(text):
        start = match.start()
        while start > 0 and text[start - 1] in _TOKEN_CHARS:
            start -= 1
        yield start


def rules() -> list[Rule]:
    return [
        Rule(
            "vendor_token",
            re.compile(
                r"(?P<prefix>[A-Za-z][A-Za-z0-9]{1,11})(?:[._\-][A-Za-z0-9]{1,16}){0,3}"
                r"[._\-][A-Za-z0-9]{20,}(?:[._\-][A-Za-z0-9]+){0,4}" + RIGHT_BOUNDARY
            ),
            vet=_vendor_vet,
            bounded=True,
            starts=_word_starts,
        ),
        Rule(
            "url_token",
            re.compile(r"://([A-Za-z0-9_\-]{20,})@(?=[A-Za-z0-9\[])"),
            group=1,
            vet=_url_user_vet,
            hints=("://",),
        ),
        Rule(
            "cli_login_token",
            re.compile(
                r"(?:auth|login|authtoken|add-authtoken)[ \t]+(?:--?[a-z][a-z\-]*[ \t=]+)?"
                r"(" + _LOGIN_VALUE.pattern + r")" + RIGHT_BOUNDARY
            ),
            group=1,
            vet=_login_vet,
            bounded=True,
            hints=("auth", "login"),
        ),
    ]
