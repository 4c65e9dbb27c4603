"""Licence fields of the card header, checked against the Hub's licence identifiers.

The Hub accepts `license: <id>` for the ids below; `other` must come with `license_name` (a
lowercase slug) and `license_link` (a URL or a file in the repo, e.g. LICENSE.md).
"""

from __future__ import annotations

import re
from typing import Any

from builder.errors import PublishError

HUB_LICENSES = frozenset(
    [
        "apache-2.0",
        "mit",
        "openrail",
        "bigscience-openrail-m",
        "creativeml-openrail-m",
        "bigscience-bloom-rail-1.0",
        "bigcode-openrail-m",
        "afl-3.0",
        "artistic-2.0",
        "bsl-1.0",
        "bsd",
        "bsd-2-clause",
        "bsd-3-clause",
        "bsd-3-clause-clear",
        "c-uda",
        "cc",
        "cc0-1.0",
        "cc-by-2.0",
        "cc-by-2.5",
        "cc-by-3.0",
        "cc-by-4.0",
        "cc-by-sa-3.0",
        "cc-by-sa-4.0",
        "cc-by-nc-2.0",
        "cc-by-nc-3.0",
        "cc-by-nc-4.0",
        "cc-by-nd-4.0",
        "cc-by-nc-nd-3.0",
        "cc-by-nc-nd-4.0",
        "cc-by-nc-sa-2.0",
        "cc-by-nc-sa-3.0",
        "cc-by-nc-sa-4.0",
        "cdla-sharing-1.0",
        "cdla-permissive-1.0",
        "cdla-permissive-2.0",
        "wtfpl",
        "ecl-2.0",
        "epl-1.0",
        "epl-2.0",
        "etalab-2.0",
        "eupl-1.1",
        "eupl-1.2",
        "agpl-3.0",
        "gfdl",
        "gpl",
        "gpl-2.0",
        "gpl-3.0",
        "lgpl",
        "lgpl-2.1",
        "lgpl-3.0",
        "isc",
        "h-research",
        "intel-research",
        "lppl-1.3c",
        "ms-pl",
        "apple-ascl",
        "apple-amlr",
        "mpl-2.0",
        "odc-by",
        "odbl",
        "openrail++",
        "osl-3.0",
        "postgresql",
        "ofl-1.1",
        "ncsa",
        "unlicense",
        "zlib",
        "pddl",
        "lgpl-lr",
        "deepfloyd-if-license",
        "llama2",
        "llama3",
        "llama3.1",
        "llama3.2",
        "llama3.3",
        "llama4",
        "gemma",
        "unknown",
        "other",
    ]
)
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


def licence_fields(
    license: str, license_name: str | None = None, license_link: str | None = None
) -> dict[str, Any]:
    """The header's licence keys; a value the Hub would reject is a PublishError."""
    if license not in HUB_LICENSES:
        raise PublishError(
            f"publish.license {license!r} is not a Hub licence id; use one of e.g. mit, "
            "apache-2.0, cc-by-4.0, unknown, or `other` with license_name and license_link"
        )
    if license != "other":
        return {"license": license}
    if not license_name or not license_link:
        raise PublishError(
            "publish.license is `other`: set publish.license_name (a slug like `my-licence`) "
            "and publish.license_link (a URL or LICENSE.md), or pick a Hub licence id"
        )
    if not NAME_PATTERN.fullmatch(license_name):
        raise PublishError(f"publish.license_name {license_name!r}: use a lowercase slug")
    return {"license": "other", "license_name": license_name, "license_link": license_link}
