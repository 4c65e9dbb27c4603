"""The commands, their options with defaults, and examples (`nap-builder CMD --help`)."""

from __future__ import annotations

import argparse

from builder import __version__
from builder.cli import handlers
from builder.cli.help_text import EPILOGS

DESCRIPTION = (
    "Build next-action-preserving observation-compression datasets from coding-agent trajectories."
)


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults after each option's help (not the empty ones: None, False); epilogs
    (examples, exit codes) kept as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False) or isinstance(action, argparse._VersionAction):
            return action.help
        return super()._get_help_string(action)


def _verbose(parser: argparse.ArgumentParser, default: object) -> None:
    # on the main parser and on every command, so `-v` works before or after the command;
    # SUPPRESS on the commands keeps a `-v` given before the command
    parser.add_argument(
        "-v", "--verbose", action="store_true", default=default, help="debug logging"
    )


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, summary: str
) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        name,
        help=summary,
        description=summary,
        epilog=EPILOGS.get(name),
        formatter_class=_Formatter,
    )
    _verbose(parser, argparse.SUPPRESS)
    return parser


def _overrides(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a config key; the value is YAML, e.g. --set limits.concurrency=8 "
        '--set "inputs=[{path: runs/}]" (repeatable; `nap-builder config` lists the keys)',
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nap-builder",
        description=DESCRIPTION,
        epilog=EPILOGS["main"],
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"nap-builder {__version__}")
    _verbose(parser, False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ingest = _command(sub, "ingest", "trajectory files → trajectories/steps/quarantine tables")
    ingest.add_argument("paths", nargs="*", help="files, directories, globs or Hub dataset ids")
    ingest.add_argument("--out", required=True, help="output directory")
    ingest.add_argument("--format", help="force a format instead of auto-detection")
    ingest.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 if anything is quarantined, dropped or passed over",
    )
    ingest.add_argument("--min-tokens", type=int, default=256, help="eligibility threshold")
    ingest.add_argument(
        "--exclude-instances",
        action="append",
        metavar="SET|FILE|ID",
        help="drop every trajectory of these instances (decontamination): swe-bench-verified, "
        "swe-bench-lite, a file of ids, or an id; repeatable",
    )
    ingest.add_argument(
        "--hf-dataset",
        action="append",
        metavar="ID[:SPLIT]",
        help="a Hugging Face dataset: a Hub id or a local copy (Parquet, save_to_disk folder), "
        "optionally one split; repeatable",
    )
    ingest.add_argument(
        "--column",
        action="append",
        metavar="ROLE=NAME",
        help="with --hf-dataset: the column that holds ROLE (messages, id, model, resolved, "
        "tools, role_key, content_key); repeatable",
    )
    ingest.add_argument(
        "--preset", help="with --hf-dataset: the column layout of a known Hub dataset"
    )
    ingest.add_argument("--require-focus", action="store_true", help="only steps with a CFQ")
    ingest.add_argument("--workers", type=int, default=None, help="worker processes (default: 2)")
    ingest.add_argument(
        "--raw",
        action="store_true",
        help="write the tables unscrubbed (by default credentials are redacted at ingest)",
    )
    ingest.set_defaults(func=handlers.ingest_command)

    inspect = _command(sub, "inspect", "list the trajectories of a folder, or show one by step")
    inspect.add_argument("dir", help="an ingest or run output directory")
    inspect.add_argument("--trajectory", help="trajectory id (or a prefix) to show step by step")
    inspect.add_argument(
        "--list", action="store_true", help="list trajectories (the default without --trajectory)"
    )
    inspect.add_argument("--lines", type=int, default=5, help="observation lines to show")
    inspect.set_defaults(func=handlers.inspect_command)

    run = _command(sub, "run", "run a pipeline config end to end (resumable)")
    run.add_argument("config", help="a pipeline config, e.g. pipelines/openai.yaml")
    _overrides(run)
    run.set_defaults(func=handlers.run_command)

    plan = _command(sub, "plan", "requests, tokens, cost and time of a run; sends nothing")
    plan.add_argument("config", help="a pipeline config, e.g. pipelines/openai.yaml")
    _overrides(plan)
    plan.add_argument("--json", action="store_true", help="print the plan as JSON")
    plan.add_argument("--pass-rate", type=float, default=0.5, help="assumed gate pass rate")
    plan.add_argument(
        "--unique-valid", type=float, default=0.75, help="assumed valid distinct sample share"
    )
    plan.add_argument(
        "--compression", type=float, default=0.5, help="assumed judged/raw observation tokens"
    )
    plan.add_argument(
        "--completion-fraction", type=float, default=0.25, help="assumed completion/max_tokens"
    )
    plan.add_argument("--latency", type=float, default=5.0, help="assumed seconds per request")
    plan.set_defaults(func=handlers.plan_command)

    config = _command(sub, "config", "every config key: value, source, type, default, meaning")
    config.add_argument("config", nargs="?", help="a pipeline config (none: the defaults)")
    _overrides(config)
    config.add_argument("--key", metavar="PREFIX", help="only keys starting with PREFIX")
    config.set_defaults(func=handlers.config_command)

    publish = _command(sub, "publish", "lay out (and upload) a Hugging Face dataset")
    publish.add_argument(
        "out",
        nargs="+",
        help="a run output directory; several (round 0 and online rounds) are merged into one "
        "dataset, rows with the same trajectory, step and target kept once",
    )
    target = publish.add_mutually_exclusive_group(required=True)
    target.add_argument("--to", help="write the dataset folder here")
    target.add_argument("--repo", help="upload to this Hub dataset repo (ORG/NAME)")
    visibility = publish.add_mutually_exclusive_group()
    visibility.add_argument(
        "--private",
        dest="private",
        action="store_const",
        const=True,
        help="make the repo private (also changes an existing public repo)",
    )
    visibility.add_argument(
        "--public",
        dest="private",
        action="store_const",
        const=False,
        help="make the repo public (also changes an existing private repo)",
    )
    publish.add_argument("--dry-run", action="store_true", help="list what would be uploaded")
    publish.add_argument(
        "--tokenizer",
        help="local Hugging Face tokenizer (folder or cached name) whose chat template counts "
        "the token lengths (default: publish.tokenizer, else a cl100k estimate)",
    )
    publish.add_argument(
        "--max-tokens",
        type=int,
        help="leave out training rows whose whole sequence is longer (reported per split)",
    )
    publish.set_defaults(func=handlers.publish_command)

    export = _command(sub, "export", "write a folder's trajectories in another format (ADP)")
    export.add_argument("out", help="an ingest or run output directory")
    export.add_argument("--to", nargs=2, required=True, metavar=("FORMAT", "DIR"),
                        help="the format (adp) and the folder to write")  # fmt: skip
    export.add_argument(
        "--no-scrub", action="store_true", help="keep secrets in the text (default: redacted)"
    )
    export.set_defaults(func=handlers.export_command)

    status = _command(sub, "status", "batch jobs of a run: pending, age, progress")
    status.add_argument("out", help="a run output directory")
    status.set_defaults(func=handlers.status_command)

    evaluate = _command(sub, "eval", "measure compressors by next-action preservation")
    evaluate.add_argument("config", help="a pipeline config (inputs, agent, gate, cache, limits)")
    evaluate.add_argument(
        "--compressor",
        action="append",
        required=True,
        metavar="SPEC",
        help="unchanged | omit | rule:NAME | teacher | endpoint (repeatable)",
    )
    evaluate.add_argument(
        "--prefixes",
        choices=("raw", "own", "both"),
        default="raw",
        help="earlier observations in the agent's context: as they ran (raw), compressed by "
        "the compressor under test (own: the context it makes once deployed), or both, side "
        "by side",
    )
    evaluate.add_argument("--split", help="only this split of --dataset (e.g. test)")
    evaluate.add_argument("--dataset", help="a `nap-builder publish --to` folder")
    _overrides(evaluate)
    evaluate.set_defaults(func=handlers.eval_command)

    view = _command(sub, "view", "write one offline HTML file to browse a run's steps")
    view.add_argument("out", help="a run output directory")
    view.add_argument("--to", help="the HTML file (default: OUT/view.html)")
    view.set_defaults(func=handlers.view_command)

    cal = _command(sub, "calibrate", "sweep θ on labelled pairs and recommend one")
    cal.add_argument(
        "pairs",
        nargs="+",
        help="labelled pairs JSONL ({a, b, same, reason, ...} per line); several are pooled",
    )
    cal.add_argument("--similarity", default="semantic", help="exact | normalized | semantic")
    cal.add_argument("--split", help="only pairs of this split (e.g. holdout)")
    cal.add_argument(
        "--min-precision", type=float, default=0.98, help="floor on precision of 'same'"
    )
    cal.add_argument(
        "--config", help="a pipeline YAML whose gate.threshold to report (default: the default)"
    )
    cal.add_argument(
        "--no-environment",
        action="store_true",
        help="compare pairs alone, ignoring the sandbox facts (env_a, env_b) they carry",
    )
    cal.set_defaults(func=handlers.calibrate_command)

    pairs = _command(sub, "pairs", "export (reference, candidate) action pairs to label")
    pairs.add_argument("out", help="a run output directory (with judgements/ and references/)")
    pairs.add_argument("--sample", type=int, required=True, help="how many pairs")
    pairs.add_argument("--seed", type=int, default=0, help="sampling seed")
    pairs.add_argument("--output", help="JSONL to write (default: OUT/pairs_to_label.jsonl)")
    pairs.set_defaults(func=handlers.pairs_command)
    return parser
