"""Fake credentials with realistic shapes, built at test time from a seeded RNG.

No value in the repository is a credential, and none is written out whole in the source (only
prefixes and alphabets), so secret scanners do not flag the tests.
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse

RNG = random.Random(20261129)
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def rand(chars: str, n: int) -> str:
    return "".join(RNG.choice(chars) for _ in range(n))


def mixed(chars: str, n: int) -> str:
    """A random token guaranteed to hold upper, lower and digits (like real keys do)."""
    return "Aa1" + rand(chars, n - 3)


def b64(n_bytes: int) -> str:
    return base64.b64encode(RNG.randbytes(n_bytes)).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt() -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": rand(string.digits, 10), "name": "Jane"}).encode())
    return f"{header}.{payload}.{b64url(RNG.randbytes(32))}"


def pem_lines(n_bytes: int) -> str:
    body = b64(n_bytes)
    return "\n".join(body[i : i + 64] for i in range(0, len(body), 64))


def pem(label: str, n_bytes: int = 300, headers: str = "") -> str:
    """A key block `-----BEGIN <label>-----` with optional RFC 1421 headers."""
    return f"-----BEGIN {label}-----\n{headers}{pem_lines(n_bytes)}\n-----END {label}-----"


def encrypted_legacy_pem() -> str:
    headers = f"Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{rand(HEX, 32).upper()}\n\n"
    return pem("RSA PRIVATE KEY", 600, headers)


def pgp_key() -> str:
    body = pem_lines(400)
    return (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
        f"{body}\n={rand(B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----"
    )


def ssh2_key() -> str:
    return (
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n"
        f'Comment: "rsa-key-2026"\n{pem_lines(300)}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----'
    )


def putty_key() -> str:
    return (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key\n"
        f"Public-Lines: 2\n{pem_lines(48)}\nPrivate-Lines: 1\n{b64(32)}\n"
        f"Private-MAC: {rand(HEX, 64)}"
    )


def truncated_pem() -> str:
    """`head -4 id_rsa`: a block without its END line."""
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + pem_lines(150)


def service_account_json() -> str:
    """A PEM as it sits, JSON-escaped, in a GCP service-account key file."""
    return json.dumps(pem("PRIVATE KEY", 400))[1:-1]


def discord_token() -> str:
    """New format: a 26-character id part and a 38-character HMAC part."""
    return f"MTE{rand(ALNUM, 23)}.{rand(URLSAFE, 6)}.{mixed(URLSAFE, 38)}"


def sas_signature() -> str:
    return urllib.parse.quote(b64(32), safe="")


def docker_auth() -> str:
    return base64.b64encode(f"deploy:{mixed(ALNUM, 20)}".encode()).decode()
