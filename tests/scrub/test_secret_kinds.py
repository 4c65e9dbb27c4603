"""The secrets benchmark as a test: recall over 120+ credential kinds built from vendors'
documented formats, look-alikes kept byte for byte, and JSON kept valid."""

from __future__ import annotations

import json

import pytest

from builder.scrub import Scrubber
from tests.scrub.kinds import KINDS, LOOKALIKES, evaluate, leaked


def test_the_benchmark_has_the_kinds_and_look_alikes_it_claims() -> None:
    assert len({k.name for k in KINDS}) == len(KINDS) >= 120
    assert len(LOOKALIKES) >= 40
    assert all(k.source and "{v}" in k.template for k in KINDS)


def test_recall_over_the_kinds_and_look_alikes_redacted_meet_the_targets() -> None:
    result = evaluate(Scrubber())
    assert result["recall"] >= 0.98, result["missed_design"]
    assert result["lookalikes_redacted"] <= 2, result["redacted_lookalikes"]


@pytest.mark.parametrize(("name", "text"), LOOKALIKES, ids=[n for n, _ in LOOKALIKES])
def test_each_look_alike_is_kept_byte_for_byte(name: str, text: str) -> None:
    assert Scrubber().scrub(text) == text


def test_secrets_inside_json_strings_are_removed_and_the_json_stays_valid() -> None:
    document = json.dumps({"command": "\n".join(k.text for k in KINDS)})
    scrubbed = Scrubber().scrub(document)
    back = json.loads(scrubbed)["command"]
    missed = [k.name for k in KINDS if leaked(k.value, back)]
    assert len(missed) <= 0.02 * len(KINDS), missed


def test_a_value_cut_in_half_counts_as_leaked() -> None:
    value = "glsa_" + "Ab1" * 12
    assert leaked(value, f"x {value[:20]}[REDACTED]")
    assert not leaked(value, "x [REDACTED:vendor_token] y")


def test_names_with_long_camel_case_runs_after_a_prefix_are_kept() -> None:
    """Written after the corpus, for the class-change test of the vendor-token family: these
    have a prefix, a separator and a 20+ character run with a digit, as tokens do, but their
    runs change between upper, lower and digits only at word boundaries."""
    text = (
        "def get_UserAccountSettingsHandler2(self):\n"
        "import app.HTTPRequestLoggingMiddleware3x\n"
        "<my-ComponentPropsWithRefExtended2 />\n"
        "class test_OrderedDictionaryOfPendingJobs4:\n"
    )
    assert Scrubber().scrub(text) == text
