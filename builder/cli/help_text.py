"""Examples and the facts a user needs before a long command: resume, Ctrl-C, exit codes."""

from __future__ import annotations

EXIT_CODES = """\
exit codes:
  0    done
  1    nothing to do: no valid trajectory in the inputs (ingest), or --strict and something
       was quarantined
  2    usage, config or pre-flight error (bad input path, missing API key, unreachable
       endpoint, unwritable output): nothing was ingested or sent
  3    the run ended with failed shards, or its budget stopped it: run the same command again
       to resume (cached answers are not paid again)
  130  interrupted (Ctrl-C or SIGTERM)"""

RUN = f"""\
Before anything is ingested or sent, every input path, API key, endpoint (one models-list
request, not billed), the output folder and the budget are checked; each problem is named
and the command exits 2.

Resume: a run is sharded by trajectory. Run the same command again and it skips finished
shards and answers repeated requests from OUT/cache (never paid twice); a config change
that alters the output (see `nap-builder config`) starts the NAP tables over.
Ctrl-C / SIGTERM: the first finishes the shards in flight and stops; the second abandons
them (finished shards are kept). A kill -9 loses at most the shards in flight.

examples:
  nap-builder run pipelines/openai.yaml --set "inputs=[{{path: runs/}}]" --set output.dir=out/gpt
  nap-builder run pipelines/demo.yaml --set limits.concurrency=4 -v

{EXIT_CODES}"""

EPILOGS = {
    "main": f"""\
examples:
  nap-builder ingest runs/ --out work/           # any mix of supported formats
  nap-builder inspect work/                       # list trajectories
  nap-builder plan pipelines/openai.yaml          # requests and cost, sends nothing
  nap-builder run pipelines/openai.yaml           # the whole pipeline (resumable)
  nap-builder publish out/gpt --to out/gpt-dataset
  nap-builder config pipelines/openai.yaml --key limits

{EXIT_CODES}""",
    "run": RUN,
    "ingest": """\
examples:
  nap-builder ingest runs/ more/*.jsonl --out work/
  nap-builder ingest dumps/ --out work/ --format swe-agent --strict
  nap-builder ingest ~/.codex/sessions ~/.gemini/tmp --out work/    # Codex CLI, Gemini CLI
  nap-builder ingest --hf-dataset nebius/SWE-rebench-openhands-trajectories:train --out work/
  nap-builder ingest --hf-dataset copies/swe-smith --preset swe-smith --out work/
  nap-builder ingest --hf-dataset ORG/NAME --column messages=chat --column id=task --out w/

column roles: messages, id, model, resolved, tools, role_key, content_key
presets: swe-smith, swe-rebench-openhands, swe-agent-trajectories, open-swe-traces (chosen by
the Hub id, or by the columns of a local copy, when --preset is not given)""",
    "export": """\
Writes DIR/full_std.jsonl: one Agent Data Protocol (ADP) standardized trajectory a line, with
`details.nap_builder` linking each step to its observation and, for a run folder, the
compressions selected for it. `nap-builder ingest DIR` reads it back (format `adp`).

examples:
  nap-builder export out/gpt --to adp out/gpt-adp
  nap-builder export work/ --to adp adp/ --no-scrub""",
    "inspect": """\
examples:
  nap-builder inspect work/                       # every trajectory: instance, harness, steps
  nap-builder inspect work/ --trajectory 3f9a     # one trajectory, step by step""",
    "plan": """\
examples:
  nap-builder plan pipelines/openai.yaml
  nap-builder plan pipelines/anthropic.yaml --set agent.batch=true --json""",
    "config": """\
Lists every key with its value, where the value comes from (file, --set, default), its type,
its default and its meaning. Keys marked `hash` change the run's output: changing them makes a
resumed run start its NAP tables over.

examples:
  nap-builder config                              # the defaults
  nap-builder config pipelines/openai.yaml --key limits
  nap-builder config pipelines/demo.yaml --set gate.threshold=0.7 --key gate""",
    "publish": """\
examples:
  nap-builder publish out/gpt --to out/gpt-dataset
  nap-builder publish out/gpt --repo ORG/NAME --private --dry-run""",
    "status": """\
examples:
  nap-builder status out/gpt""",
    "eval": """\
examples:
  nap-builder eval pipelines/openai.yaml --compressor unchanged --compressor rule:generic
  nap-builder eval pipelines/vllm.yaml --dataset out/ds --split test --compressor endpoint""",
    "view": """\
examples:
  nap-builder view out/gpt --to /tmp/gpt.html""",
    "calibrate": """\
examples:
  nap-builder calibrate tests/similarity/labelled_pairs.jsonl --split holdout""",
    "pairs": """\
examples:
  nap-builder pairs out/gpt --sample 200""",
}
