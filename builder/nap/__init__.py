"""Next-action preservation for one step: teacher candidates, agent references, judging,
the gate and the judge-reliability control.

`step` runs one step from candidates to selection; `agent` and `agent_reply` ask the agent
and read its action; `judging` (generate mode) and `likelihood_judging` decide each
candidate; `gate` aggregates similarities against θ; `control` judges the raw observation;
`types` holds the records and settings, `from_config` reads them from a pipeline config.
Online rounds: `prefix` puts each step in its round's context (earlier observations compressed,
or as a deployed compressor showed them), `rounds` judges a deployed compression and stamps
the round on every row.

Reads: `steps`. Writes: rows of `candidates`, `references`, `judgements`, `supervision`,
`preferences`, `prefixes`, `round_steps`.
Entry point: `builder.nap.step.process_step`.
"""
