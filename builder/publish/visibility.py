"""Repo visibility: explicit on creation, checked on every publish, changed only when asked.

`requested` is True (private), False (public) or None (no wish: a new repo is private, an
existing one keeps its visibility). `change` says the wish was asked for on the command line
(`--private` / `--public`); a wish that only comes from the config never flips an existing
repo, it warns.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

REPO_TYPE = "dataset"


@dataclass(frozen=True, slots=True)
class Visibility:
    private: bool  # after this publish
    created: bool = False
    changed: bool = False
    warning: str | None = None


def _word(private: bool) -> str:
    return "private" if private else "public"


def ensure_repo(api: object, repo_id: str, requested: bool | None, change: bool) -> Visibility:
    """Create the repo if missing; reconcile an existing repo's visibility with the request."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        info = api.repo_info(repo_id, repo_type=REPO_TYPE)  # type: ignore[attr-defined]
    except RepositoryNotFoundError:
        private = True if requested is None else requested
        api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)  # type: ignore[attr-defined]
        log.info("created %s dataset repo %s", _word(private), repo_id)
        return Visibility(private, created=True)
    current = bool(getattr(info, "private", False))
    if requested is None or requested == current:
        return Visibility(current)
    if change:
        api.update_repo_settings(repo_id, private=requested, repo_type=REPO_TYPE)  # type: ignore[attr-defined]
        message = f"{repo_id} was {_word(current)}: made it {_word(requested)} as asked"
        log.warning("%s", message)
        return Visibility(requested, changed=True, warning=message)
    flag = "--private" if requested else "--public"
    message = (
        f"{repo_id} is {_word(current)} but the config asks for {_word(requested)}: "
        f"visibility left unchanged; pass {flag} to change it"
    )
    log.warning("%s", message)
    return Visibility(current, warning=message)
