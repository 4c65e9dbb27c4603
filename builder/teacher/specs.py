"""Compressor SPECs, the one grammar `nap-builder eval --compressor` and
`replay.prefix_compressor` share: `unchanged`, `omit`, `rule:NAME`, `teacher` (the config's
teacher) and `endpoint` (a trained compressor in the config's `compressor:` block)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from builder.errors import ConfigError
from builder.teacher.candidates import RULE_PREFIX
from builder.teacher.rules import RULES

Kind = Literal["unchanged", "omit", "rule", "teacher", "endpoint"]
SIMPLE: tuple[Kind, ...] = ("unchanged", "omit", "teacher", "endpoint")


@dataclass(frozen=True)
class Spec:
    """One compressor SPEC."""

    kind: Kind
    rule: str | None = None

    @property
    def name(self) -> str:
        return f"{RULE_PREFIX}{self.rule}" if self.kind == "rule" else self.kind

    @property
    def folder(self) -> str:
        """The folder name under OUT/eval/ (no `:`, which some file systems refuse)."""
        return self.name.replace(":", "-")


def spec_problem(text: str, has_endpoint: bool) -> str | None:
    """Why `text` is not a usable SPEC, or None."""
    if text.startswith(RULE_PREFIX):
        name = text.removeprefix(RULE_PREFIX)
        if name not in RULES:
            return f"unknown rule {name!r}; known rules: {sorted(RULES)}"
        return None
    if text not in SIMPLE:
        return f"unknown compressor; allowed: {', '.join([*SIMPLE, 'rule:NAME'])}"
    if text == "endpoint" and not has_endpoint:
        return (
            "`endpoint` needs a `compressor:` block in the config "
            "(provider, model, base_url of an OpenAI-compatible server)"
        )
    return None


def parse_spec(text: str, *, has_endpoint: bool, option: str = "--compressor") -> Spec:
    """A SPEC, checked: known rule, configured endpoint (`option` names it in the error)."""
    text = text.strip()
    problem = spec_problem(text, has_endpoint)
    if problem is not None:
        raise ConfigError(f"{option} {text!r}: {problem}")
    if text.startswith(RULE_PREFIX):
        return Spec("rule", text.removeprefix(RULE_PREFIX))
    return Spec(text)  # type: ignore[arg-type]
