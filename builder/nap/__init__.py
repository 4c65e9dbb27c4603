"""Next-action preservation for one step: teacher candidates, agent references, judging,
the gate and the judge-reliability control.

`step` runs one step from candidates to selection; `agent` and `agent_reply` ask the agent
and read its action; `judging` (generate mode) and `likelihood_judging` decide each
candidate; `gate` aggregates similarities against θ; `control` judges the raw observation;
`types` holds the records and settings, `from_config` reads them from a pipeline config.

Reads: `steps`. Writes: rows of `candidates`, `references`, `judgements`, `supervision`,
`preferences`.
Entry point: `builder.nap.step.process_step`.
"""
