"""The card's prose: how the dataset was made, its limitations, and how to cite it (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from builder.publish.card_inputs import CardInputs, builder_version, title

# Measured agreement of the similarity measures with human labels of "same action", held-out
# pairs at θ = 0.65 (README, "Calibrating the gate"; benchmarks/agreement.py).
MEASURED_SIMILARITY = {
    "semantic": "precision 0.983 and recall 0.983 on 315 held-out labelled pairs at θ = 0.65",
    "normalized": "precision 1.000 and recall 0.398 on the same held-out pairs",
}


def dig(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def made_section(inputs: CardInputs) -> str:
    cfg, totals = inputs.resolved_config, inputs.report.get("totals") or {}
    if not cfg:
        return ""
    min_tokens = dig(cfg, "eligibility.min_tokens")
    focus = " and carries a context-focus question" if dig(cfg, "eligibility.require_focus") else ""
    rules = dig(cfg, "teacher.rules") or []
    rule_text = f", plus {len(rules)} rule-based candidates ({', '.join(rules)})" if rules else ""
    references = (
        f"the agent model `{dig(cfg, 'agent.model')}` is asked again on the raw context "
        f"({dig(cfg, 'references.samples')} samples at temperature "
        f"{dig(cfg, 'references.temperature')}), giving a distribution of reference actions"
        if dig(cfg, "references.mode") != "logged"
        else "the logged next action is the reference"
    )
    paragraphs = [
        "## How this dataset was made",
        "",
        f"Agent trajectories ({totals.get('trajectories', 'n/a')} kept after decontamination, "
        "see Provenance) were replayed step by step. A step is eligible when it has exactly one "
        "action and one observation, its command parses, it is not the last step, and its "
        f"line-numbered observation is at least {min_tokens} cl100k tokens long{focus} "
        f"({totals.get('eligible_steps', 'n/a')} eligible steps).",
        "",
        f"For each eligible step the teacher `{dig(cfg, 'teacher.model')}` wrote "
        f"{dig(cfg, 'teacher.samples')} candidate compressions at temperature "
        f"{dig(cfg, 'teacher.temperature')}{rule_text}: a JSON object keeping the output "
        "unchanged, replacing it by a summary, or omitting line ranges with a note. As "
        f"references, {references}.",
        "",
        _gate_paragraph(cfg),
        "",
        f"Up to {dig(cfg, 'selection.max_per_step')} of the shortest passing candidates of a "
        "step became targets (`prompt_completion`, `sft`); a step where none passed was "
        + (
            "kept with an `unchanged` target."
            if dig(cfg, "selection.fallback") == "unchanged"
            else "dropped."
        )
        + " Preference pairs join a passing with a failing candidate of the same step. Secrets "
        "were redacted before any text went to a model and again in every published file.",
    ]
    return "\n".join(paragraphs)


def _gate_paragraph(cfg: Mapping[str, Any]) -> str:
    agent = dig(cfg, "agent.model")
    if dig(cfg, "gate.mode") == "likelihood":
        return (
            f"**The gate (likelihood).** The agent model `{agent}` scored the tokens of each "
            "reference action given the compressed observation and given the raw one; a "
            "candidate passed when the aggregate of min(1, exp(d)) over the references was at "
            f"least {dig(cfg, 'gate.likelihood_threshold')} "
            f"(`{dig(cfg, 'gate.likelihood_score')}` score)."
        )
    aggregate = dig(cfg, "gate.aggregate")
    how = (
        f"the mean of its top {dig(cfg, 'gate.top_k')}" if aggregate == "mean_top_k" else aggregate
    )
    return (
        f"**The gate (next-action preservation).** The agent model `{agent}` was shown each "
        "candidate's rendering in place of the raw observation and asked for its next action; "
        f"that action was compared with every reference by `{dig(cfg, 'gate.similarity')}` "
        f"similarity, and the candidate passed when {how} similarities was at least "
        f"{dig(cfg, 'gate.threshold')}."
    )


def limitations_section(inputs: CardInputs) -> str:
    cfg, report = inputs.resolved_config, inputs.report
    found = report.get("control")
    control: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    rate = control.get("pass_rate")
    lines = ["## Limitations", ""]
    if isinstance(rate, int | float):
        verdict = (
            "below the floor: the judge is unreliable, and its verdicts carry little information"
            if control.get("warning")
            else "the ceiling of what any compression could pass"
        )
        lines.append(
            f"- **Judge reliability.** On the raw observations the agent reproduced its own "
            f"reference action on {control.get('reproduced')} of {control.get('steps')} steps "
            f"(control pass rate {rate:.0%}): {verdict}."
        )
    else:
        lines.append("- **Judge reliability.** No control was recorded for this run.")
    lines.append(f"- **Gate precision.** {_precision_text(cfg)}")
    lines += [
        "- **What the gate cannot tell apart.** It looks one action ahead: a compression that "
        "keeps the next action but drops a fact the agent needs later passes. Two actions it "
        "calls the same can still differ in a detail the similarity ignores, and a weak agent "
        "model may reproduce an action from the task alone, whatever the observation says.",
        "- **Teacher and rules.** Targets are what the teacher or a rule wrote and the gate let "
        "through; they inherit the teacher's style and the rules' blind spots.",
        "- **Redaction** is pattern-based: a secret in an unusual shape can remain.",
        "- **Decontamination** covers the instances listed in `exclude_instances` only, and only "
        "trajectories whose format records an instance id (`instance_id` column).",
    ]
    return "\n".join(lines)


def _precision_text(cfg: Mapping[str, Any]) -> str:
    mode, similarity = dig(cfg, "gate.mode"), dig(cfg, "gate.similarity")
    threshold = dig(cfg, "gate.threshold")
    if mode == "likelihood":
        return (
            "The likelihood gate has not been measured against human labels; check a sample "
            "of its verdicts before trusting them."
        )
    measured = MEASURED_SIMILARITY.get(str(similarity))
    if measured is None:
        return (
            f"`{similarity}` similarity has no measured agreement with human labels of the "
            "same action (exact matching misses nearly every equivalent rewrite)."
        )
    note = "" if threshold == 0.65 else f" (this run used θ = {threshold}, not measured)"
    return (
        f"Whether two actions are the same is itself a judgement: `{similarity}` similarity "
        f"agreed with human labels at {measured}{note}. A false 'same' teaches the compressor "
        "to drop what the agent needed."
    )


def citation_section(inputs: CardInputs) -> str:
    name = title(inputs)
    key = (inputs.repo_id or "nap_builder_dataset").replace("/", "_").replace("-", "_")
    where = (
        f"  howpublished = {{\\url{{https://huggingface.co/datasets/{inputs.repo_id}}}}},\n"
        if inputs.repo_id
        else ""
    )
    version = inputs.builder_version or builder_version()
    config = f", config {inputs.config_hash}" if inputs.config_hash else ""
    return (
        "## Citation\n\n"
        "```bibtex\n"
        f"@misc{{{key},\n"
        f"  title = {{{name}}},\n"
        f"{where}"
        f"  note = {{Built with nap-builder {version}{config}}}\n"
        "}\n"
        "@misc{coact,\n"
        "  title = {Action-preserving observation compression for coding agents},\n"
        "  howpublished = {arXiv:2607.02911},\n"
        "  note = {CoACT: the next-action-preservation method this data follows}\n"
        "}\n"
        "```"
    )
