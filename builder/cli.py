"""Command-line entry points: ingest, inspect, plan, run, status, publish, eval, view,
calibrate, pairs."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from builder.errors import NapError

log = logging.getLogger("nap_builder")


def _ingest(args: argparse.Namespace) -> int:
    from builder.ingest.parallel import InputSpec, format_summary, run_ingest
    from builder.startup import command_ready
    from builder.steps.pairing import EligibilityRules

    command_ready()
    specs = [InputSpec(p, args.format) for p in args.paths]
    rules = EligibilityRules(min_tokens=args.min_tokens, require_focus=args.require_focus)
    summary = run_ingest(specs, Path(args.out), rules=rules, workers=args.workers)
    print(format_summary(summary))
    total = summary.total
    if total.trajectories == 0:
        print("error: no valid trajectory found in the inputs", file=sys.stderr)
        return 1
    if args.strict and (total.quarantined or total.duplicates):
        print(
            f"error: {total.quarantined} input(s) quarantined, {total.duplicates} duplicate(s) "
            "dropped (--strict)",
            file=sys.stderr,
        )
        return 1
    return 0


def _inspect(args: argparse.Namespace) -> int:
    from builder.inspect import render_trajectory

    print(render_trajectory(Path(args.dir), args.trajectory, head_lines=args.lines))
    return 0


def _run(args: argparse.Namespace) -> int:
    from builder.config import load_config
    from builder.run.driver import run_pipeline
    from builder.startup import command_ready

    config = load_config(Path(args.config), args.set or [])
    command_ready()
    result = run_pipeline(config, config_path=Path(args.config))
    print(result.summary_text())
    return result.exit_code


def _plan(args: argparse.Namespace) -> int:
    import json

    from builder.config import load_config
    from builder.plan.estimate import PlanAssumptions, make_plan
    from builder.plan.text import render_plan

    config = load_config(Path(args.config), args.set or [])
    assumptions = PlanAssumptions(
        unique_valid=args.unique_valid,
        pass_rate=args.pass_rate,
        compression=args.compression,
        completion_fraction=args.completion_fraction,
        latency_s=args.latency,
    )
    plan = make_plan(config, assumptions)
    print(json.dumps(plan.as_dict(), indent=2) if args.json else render_plan(plan, config))
    return 0


def _publish(args: argparse.Namespace) -> int:
    from builder.publish.command import publish

    return publish(
        Path(args.out), to=args.to, repo=args.repo, private=args.private, dry_run=args.dry_run
    )  # args.private: True (--private), False (--public), None (neither)


def _status(args: argparse.Namespace) -> int:
    from builder.llm.batch.status import format_status

    print(format_status(Path(args.out)))
    return 0


def _eval(args: argparse.Namespace) -> int:
    from builder.config import load_config
    from builder.evaluate.eval_run import run_eval
    from builder.startup import command_ready

    config = load_config(Path(args.config), args.set or [])
    command_ready()
    dataset = Path(args.dataset) if args.dataset else None
    result = run_eval(config, args.compressor, split=args.split, dataset=dataset)
    print(result.summary_text())
    return 0


def _view(args: argparse.Namespace) -> int:
    from builder.view.write import write_view

    path, steps = write_view(Path(args.out), Path(args.to) if args.to else None)
    print(f"wrote {path} ({steps} steps)")
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from builder.calibrate import calibrate
    from builder.config import load_config
    from builder.config.stages import GateConfig

    theta, source = GateConfig().threshold, "the default gate.threshold"
    if args.config:
        theta, source = load_config(Path(args.config), []).gate.threshold, args.config
    text = calibrate(
        Path(args.pairs),
        args.similarity,
        split=args.split,
        min_precision=args.min_precision,
        pipeline_theta=theta,
        pipeline_source=source,
    )
    print(text)
    return 0


def _pairs(args: argparse.Namespace) -> int:
    from builder.calibrate import export_pairs, write_pairs

    rows = export_pairs(Path(args.out), args.sample, seed=args.seed)
    target = Path(args.output) if args.output else Path(args.out) / "pairs_to_label.jsonl"
    write_pairs(rows, target)
    print(f"wrote {len(rows)} pairs to {target} (set 'same' and 'reason' on each line)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nap-builder",
        description="Build next-action-preserving observation-compression datasets "
        "from coding-agent trajectories.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="trajectory files → trajectories/steps/quarantine")
    ingest.add_argument("paths", nargs="+", help="files, directories, globs or Hub dataset ids")
    ingest.add_argument("--out", required=True, help="output directory")
    ingest.add_argument("--format", help="force a format instead of auto-detection")
    ingest.add_argument("--strict", action="store_true", help="exit 1 if anything is quarantined")
    ingest.add_argument("--min-tokens", type=int, default=256, help="eligibility threshold")
    ingest.add_argument("--require-focus", action="store_true", help="only steps with a CFQ")
    ingest.add_argument("--workers", type=int, default=None, help="processes (default: 2)")
    ingest.set_defaults(func=_ingest)

    inspect = sub.add_parser("inspect", help="print one trajectory step by step")
    inspect.add_argument("dir", help="an ingest or run output directory")
    inspect.add_argument("--trajectory", required=True, help="trajectory id (or a prefix)")
    inspect.add_argument("--lines", type=int, default=5, help="observation lines to show")
    inspect.set_defaults(func=_inspect)

    run = sub.add_parser("run", help="run a pipeline config end to end (resumable)")
    run.add_argument("config", help="pipelines/*.yaml")
    run.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config key")
    run.set_defaults(func=_run)

    plan = sub.add_parser("plan", help="requests, tokens, cost and time of a run; sends nothing")
    plan.add_argument("config", help="pipelines/*.yaml")
    plan.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config key")
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
    plan.set_defaults(func=_plan)

    publish = sub.add_parser("publish", help="lay out (and upload) a Hugging Face dataset")
    publish.add_argument("out", help="a run output directory")
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
    publish.set_defaults(func=_publish)

    status = sub.add_parser("status", help="batch jobs of a run: pending, age, progress")
    status.add_argument("out", help="a run output directory")
    status.set_defaults(func=_status)

    evaluate = sub.add_parser("eval", help="measure compressors by next-action preservation")
    evaluate.add_argument("config", help="pipelines/*.yaml (inputs, agent, gate, cache, limits)")
    evaluate.add_argument(
        "--compressor",
        action="append",
        required=True,
        metavar="SPEC",
        help="unchanged | omit | rule:NAME | teacher | endpoint (repeatable)",
    )
    evaluate.add_argument("--split", help="only this split of --dataset (e.g. test)")
    evaluate.add_argument("--dataset", help="a `nap-builder publish --to` folder")
    evaluate.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    evaluate.set_defaults(func=_eval)

    view = sub.add_parser("view", help="write one offline HTML file to browse a run's steps")
    view.add_argument("out", help="a run output directory")
    view.add_argument("--to", help="the HTML file (default OUT/view.html)")
    view.set_defaults(func=_view)

    cal = sub.add_parser("calibrate", help="sweep θ on labelled pairs and recommend one")
    cal.add_argument("pairs", help="labelled pairs JSONL ({a, b, same, reason, ...} per line)")
    cal.add_argument("--similarity", default="semantic", help="exact | normalized | semantic")
    cal.add_argument("--split", help="only pairs of this split (e.g. holdout)")
    cal.add_argument(
        "--min-precision", type=float, default=0.98, help="floor on precision of 'same'"
    )
    cal.add_argument(
        "--config", help="a pipeline YAML whose gate.threshold to report (default: the default)"
    )
    cal.set_defaults(func=_calibrate)

    pairs = sub.add_parser("pairs", help="export (reference, candidate) action pairs to label")
    pairs.add_argument("out", help="a run output directory (with judgements/ and references/)")
    pairs.add_argument("--sample", type=int, required=True, help="how many pairs")
    pairs.add_argument("--seed", type=int, default=0, help="sampling seed")
    pairs.add_argument("--output", help="JSONL to write (default OUT/pairs_to_label.jsonl)")
    pairs.set_defaults(func=_pairs)
    return parser


def entry() -> None:
    """The process entry point (console script, `python -m builder.cli`): process-wide
    settings (`builder.startup`), then the command."""
    from builder.startup import exit_now, process_start

    process_start()
    exit_now(main())


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("httpx", "httpx2", "openai", "anthropic", "urllib3", "filelock", "datasets"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return int(args.func(args))
    except NapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    entry()
