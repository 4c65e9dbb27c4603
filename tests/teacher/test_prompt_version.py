"""The prompt version is tied to the prompt text: change a word, and this fails until
PROMPT_VERSION is bumped and the new fingerprint recorded here."""

from __future__ import annotations

import hashlib
import json

from builder.teacher import prompt

# sha256 of everything the teacher is shown, per version (see `fingerprint`)
FINGERPRINTS = {
    "coact-v1": "1e3f20ff15958a99b99025e5fe76c4fd916ca337dbe3aa35df508b0e465fd82d",
    "coact-v2": "028725c9944261bd23e68360e57b6b40a8492e3c2eccaeb5a24efc9fe4728fec",
}


def fingerprint() -> str:
    """System prompt, the user prompt built from sentinel inputs (with and without a focus
    question), the no-focus text and the output schema: any change to any of them shows."""
    with_focus = prompt.build_prompt("TASK", "FOCUS", "COMMAND", "LINE 1\nLINE 2")
    without = prompt.build_prompt("TASK", None, "COMMAND", "LINE 1")
    parts = [
        prompt.SYSTEM_PROMPT,
        *with_focus,
        *without,
        prompt.NO_FOCUS,
        json.dumps(prompt.COMPRESSOR_SCHEMA, sort_keys=True),
    ]
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def test_prompt_text_matches_the_fingerprint_recorded_for_its_version() -> None:
    version = prompt.PROMPT_VERSION
    assert version in FINGERPRINTS, (
        f"PROMPT_VERSION {version!r} has no recorded fingerprint: add "
        f"{version!r}: {fingerprint()!r} to FINGERPRINTS"
    )
    assert fingerprint() == FINGERPRINTS[version], (
        f"the prompt text changed but PROMPT_VERSION is still {version!r}: bump it and record "
        f"{fingerprint()!r} for the new version"
    )


def test_each_recorded_version_has_its_own_text() -> None:
    assert len(set(FINGERPRINTS.values())) == len(FINGERPRINTS)


def test_the_fingerprint_sees_a_one_word_change(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    before = fingerprint()
    monkeypatch.setattr(prompt, "SYSTEM_PROMPT", prompt.SYSTEM_PROMPT.replace("exactly", "just"))
    assert fingerprint() != before
    monkeypatch.undo()
    monkeypatch.setattr(prompt, "NO_FOCUS", prompt.NO_FOCUS + ".")
    assert fingerprint() != before
