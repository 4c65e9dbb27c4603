"""The judge-reliability control: is the agent able to reproduce its own reference at all?

NAP verdicts mean something only if the agent, given the *raw* observation, takes (about) the
action the references say it takes. So every judged step also judges its raw observation as an
`unchanged` control through the same path as a candidate; its pass rate over a run says how
much the gate's verdicts are worth. A weak agent model, a wrong chat template or a context the
server truncates all show up here as a low rate.

How the control is obtained (`control_mode`):
- `judged`: one agent request with the raw observation in place, exactly the request an
  `unchanged` candidate gets (same messages, same cache entry), gated against the references.
- `reused_reference_sample`: with sampled references drawn at the agent's own temperature, a
  reference sample *is* such a request. Sample 0 is the control action and is gated against
  the other samples (leave-one-out, so it is not compared with itself); no request is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from schemas.judgements import CONTROL_INDEX, JudgementRecord
from schemas.references import ReferenceRecord
from schemas.steps import Action

JUDGED = "judged"
REUSED = "reused_reference_sample"
CAUSES = (
    "an agent model too weak for these tasks (the embedded 270M base model is), a wrong chat "
    "template for the agent model, a context truncated by the server (check its context "
    "length), or references sampled too hot (references.temperature)"
)


def control_mode(
    control: str,
    reference_mode: str,
    reference_samples: int,
    reference_temperature: float,
    agent_temperature: float,
) -> str:
    """`reused_reference_sample` when a reference sample is equivalent to the control request
    (sampled references, at least 2, drawn at the agent's temperature) and `control` allows it."""
    reusable = (
        reference_mode == "sampled"
        and reference_samples >= 2
        and reference_temperature == agent_temperature
    )
    return REUSED if control == "auto" and reusable else JUDGED


def reused_control_input(
    references: Sequence[ReferenceRecord],
) -> tuple[ReferenceRecord, list[Action]] | None:
    """(the control sample, the references it is gated against), or None without any."""
    if len(references) < 2:
        return None
    others = [r.action for r in references[1:] if r.action is not None]
    return (references[0], others) if others else None


def control_row(base: JudgementRecord) -> JudgementRecord:
    """A judgement turned into the step's control row (fixed index, flagged)."""
    return replace(base, candidate_index=CONTROL_INDEX, judge_order=CONTROL_INDEX, is_control=True)


def control_summary(steps: int, reproduced: int, floor: float, mode: str) -> dict[str, object]:
    """The report's `control` section: counts, pass rate, floor and the warning if any."""
    rate = reproduced / steps if steps else None
    return {
        "mode": mode,
        "steps": steps,
        "reproduced": reproduced,
        "pass_rate": rate,
        "floor": floor,
        "warning": control_warning(steps, reproduced, floor),
    }


def control_warning(steps: int, reproduced: int, floor: float) -> str | None:
    """A loud, self-explaining warning when the control's pass rate is below `floor`."""
    if steps == 0 or reproduced / steps >= floor:
        return None
    rate = reproduced / steps
    return (
        f"JUDGE UNRELIABLE: on the raw observation the agent reproduced its reference action in "
        f"only {reproduced} of {steps} steps ({rate:.0%}, below gate.control_floor "
        f"{floor:.0%}), so pass/fail verdicts of this run carry little information. Likely "
        f"causes: {CAUSES}."
    )
