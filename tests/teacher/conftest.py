"""Shared observations for the teacher tests: a handcrafted pytest log and real outputs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from schemas.steps import Action, StepRecord
from tests.paths import SHARED

PYTEST_LOG = """\
============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0
rootdir: /testbed
configfile: setup.cfg
collected 6 items

tests/test_sitemaps.py::test_index PASSED                                 [ 16%]
tests/test_sitemaps.py::test_lastmod PASSED                               [ 33%]
tests/test_sitemaps.py::test_empty_items FAILED                           [ 50%]
tests/test_sitemaps.py::test_callable_lastmod PASSED                      [ 66%]
tests/test_sitemaps.py::test_i18n PASSED                                  [ 83%]
tests/test_sitemaps.py::test_alternates PASSED                            [100%]

=================================== FAILURES ===================================
_______________________________ test_empty_items _______________________________

    def test_empty_items():
        sitemap = EmptySitemap()
>       assert sitemap.get_latest_lastmod() is None

tests/test_sitemaps.py:41:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def get_latest_lastmod(self):
>       return max([self.lastmod(item) for item in self.items()])
E       ValueError: max() arg is an empty sequence

django/contrib/sitemaps/__init__.py:170: ValueError
=========================== short test summary info ============================
FAILED tests/test_sitemaps.py::test_empty_items - ValueError: max() arg is an empty sequence
========================= 1 failed, 5 passed in 0.42s =========================="""

SAMPLE = SHARED / "mini-swe-agent" / "django__django-16255" / "django__django-16255.traj.json"


def real_outputs() -> list[str]:
    """The non-empty `<output>` payloads of a real mini-swe-agent trajectory."""
    messages = json.loads(SAMPLE.read_text())["messages"]
    outputs = []
    for message in messages:
        content = message["content"]
        if not isinstance(content, str):
            content = json.dumps(content)
        match = re.search(r"<output>\n?(.*?)</output>", content, re.DOTALL)
        if match and match.group(1).strip():
            outputs.append(match.group(1))
    return outputs


def make_step(observation: str, step_index: int = 3) -> StepRecord:
    command = "cd /testbed && python -m pytest tests/test_sitemaps.py -v"
    return StepRecord(
        trajectory_id="traj-1",
        step_index=step_index,
        action_message_index=5,
        observation_message_index=6,
        source_format="mini-swe-agent",
        harness="mini-swe-agent",
        action=Action("bash", json.dumps({"command": command}), command, command),
        observation=observation,
        eligible=True,
    )


@pytest.fixture
def log() -> str:
    return PYTEST_LOG


@pytest.fixture
def step() -> StepRecord:
    return make_step(PYTEST_LOG)


@pytest.fixture
def real() -> list[str]:
    return real_outputs()


@pytest.fixture(name="make_step")
def make_step_fixture() -> Callable[..., StepRecord]:
    return make_step
