"""Properties over generated text: scrubbing never raises, keeps JSON valid, and is idempotent."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder.scrub import Scrubber
from tests.scrub.corpus import LOOKALIKES, SEEDED

SECRET_TEXTS = [template.format(v=value) for _, value, template in SEEDED]
FRAGMENTS = st.sampled_from(SECRET_TEXTS + LOOKALIKES) | st.text(max_size=40)
DOCUMENTS = st.lists(FRAGMENTS, max_size=6).map("\n".join)  # secrets stay whole words
JSON = st.recursive(
    DOCUMENTS | st.integers() | st.none(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
SCRUBBER = Scrubber(emails=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
def test_scrubbed_json_text_is_valid_json_without_seeded_values(document: object) -> None:
    text = json.dumps(document)
    out = SCRUBBER.scrub(text)
    back = json.loads(out)  # every redaction kept the JSON valid
    before, after = _strings(document), _strings(back)
    assert [v[:16] for _, v, _ in SEEDED if v in before and v in after] == []


def _strings(value: object) -> str:
    """Every key and string of a decoded JSON value, NUL-separated."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\0".join(k + "\0" + _strings(v) for k, v in value.items())
    if isinstance(value, list):
        return "\0".join(_strings(v) for v in value)
    return ""


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_scrubbing_twice_changes_nothing_more(text: str) -> None:
    once = SCRUBBER.scrub(text)
    assert SCRUBBER.scrub(once) == once
