"""What each command does once its arguments are parsed. Stages are imported in the function
that needs them, so that `nap-builder --help` and a mistyped command cost no heavy imports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def ingest_command(args: argparse.Namespace) -> int:
    from builder.errors import ConfigError
    from builder.ingest.parallel import InputSpec, format_summary, run_ingest
    from builder.run.preflight import PreflightError, check_paths
    from builder.startup import command_ready
    from builder.steps.pairing import EligibilityRules

    specs = [InputSpec(p, args.format) for p in args.paths] + hub_specs(args)
    if not specs:
        raise ConfigError("ingest needs input paths or --hf-dataset")
    # one bad input among good ones is quarantined, with its cause, like any broken file;
    # none that exists at all is a mistyped command
    problems = check_paths((f"input {s.path}", s.path) for s in specs)
    if len(problems) == len(specs):
        raise PreflightError("nothing was ingested:\n  " + "\n  ".join(problems))
    command_ready()
    from builder.scrub.settings import ScrubSettings

    rules = EligibilityRules(
        min_tokens=args.min_tokens,
        require_focus=args.require_focus,
        exclude_instances=excluded_ids(args.exclude_instances or []),
    )
    scrub = ScrubSettings(at_ingest=not args.raw)
    summary = run_ingest(specs, Path(args.out), rules=rules, workers=args.workers, scrub=scrub)
    print(format_summary(summary))
    total = summary.total
    if total.trajectories == 0:
        print("error: no valid trajectory found in the inputs", file=sys.stderr)
        return 1
    if args.strict and (total.quarantined or total.duplicates or summary.passed_over_count):
        print(
            f"error: {total.quarantined} input(s) quarantined, {total.duplicates} duplicate(s) "
            f"dropped, {summary.passed_over_count} file(s) passed over (--strict)",
            file=sys.stderr,
        )
        return 1
    return 0


def hub_specs(args: argparse.Namespace) -> list[Any]:
    """`--hf-dataset ID[:SPLIT]` inputs with their `--column` / `--preset` mapping."""
    from builder.errors import ConfigError
    from builder.ingest.hub_inputs import dataset_options, parse_columns, split_ref
    from builder.ingest.parallel import InputSpec

    if not args.hf_dataset:
        if args.column or args.preset:
            raise ConfigError("--column and --preset go with --hf-dataset")
        return []
    if args.format and args.format != "hf-dataset":
        raise ConfigError("--hf-dataset inputs are read with --format hf-dataset")
    columns = parse_columns(args.column or [])
    specs = []
    for text in args.hf_dataset:
        ref, split = split_ref(text)
        specs.append(
            InputSpec(ref, "hf-dataset", dataset_options(ref, split, columns, args.preset))
        )
    return specs


def excluded_ids(values: list[str]) -> frozenset[str]:
    """`--exclude-instances` values: a named set, a file of ids, or an id."""
    from pydantic import ValidationError

    from builder.config import ExcludeInstancesConfig
    from builder.errors import ConfigError

    files = [str(Path(v).resolve()) for v in values if Path(v).is_file()]
    try:
        spec = ExcludeInstancesConfig.model_validate([v for v in values if not Path(v).is_file()])
    except ValidationError as exc:
        raise ConfigError(f"--exclude-instances: {exc.errors()[0]['msg']}") from None
    return spec.model_copy(update={"files": files}).resolved()


def inspect_command(args: argparse.Namespace) -> int:
    from builder.inspect import list_trajectories, render_trajectory

    if args.list or not args.trajectory:
        print(list_trajectories(Path(args.dir)))
    else:
        print(render_trajectory(Path(args.dir), args.trajectory, head_lines=args.lines))
    return 0


def run_command(args: argparse.Namespace) -> int:
    from builder.config import load_config
    from builder.run.driver import run_pipeline
    from builder.run.preflight import require_ready
    from builder.startup import command_ready

    config = load_config(Path(args.config), args.set or [])
    require_ready(config)
    command_ready()
    result = run_pipeline(config, config_path=Path(args.config))
    print(result.summary_text())
    return result.exit_code


def plan_command(args: argparse.Namespace) -> int:
    import json

    from builder.config import load_config
    from builder.plan.estimate import PlanAssumptions, make_plan
    from builder.plan.text import render_plan
    from builder.run.preflight import require_ready

    config = load_config(Path(args.config), args.set or [])
    require_ready(config, role_names=(), reach=False)  # plan sends nothing
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


def publish_command(args: argparse.Namespace) -> int:
    from builder.publish.command import publish

    first, *more = (Path(out) for out in args.out)
    return publish(
        first,
        more=more,
        to=args.to,
        repo=args.repo,
        private=args.private,  # True (--private), False (--public), None (neither)
        dry_run=args.dry_run,
        tokenizer=args.tokenizer,
        max_tokens=args.max_tokens,
    )


def export_command(args: argparse.Namespace) -> int:
    from builder.errors import ConfigError
    from builder.export.adp_export import export_adp

    target, folder = args.to
    if target != "adp":
        raise ConfigError(f"--to {target}: unknown export format; formats: adp")
    done = export_adp(Path(args.out), Path(folder), scrub=not args.no_scrub)
    print(
        f"wrote {done.path}: {done.trajectories} trajectories (ADP), {done.steps} steps linked, "
        f"{done.supervision_rows} supervision rows"
    )
    return 0


def status_command(args: argparse.Namespace) -> int:
    from builder.llm.batch.status import format_status
    from builder.run.folder_kind import require_run_folder

    require_run_folder(Path(args.out), "status")
    print(format_status(Path(args.out)))
    return 0


def eval_command(args: argparse.Namespace) -> int:
    from builder.config import load_config
    from builder.evaluate.eval_run import run_eval
    from builder.run.preflight import require_ready
    from builder.startup import command_ready

    config = load_config(Path(args.config), args.set or [])
    roles = ["agent"] + ["teacher"] * ("teacher" in args.compressor)
    roles += ["compressor"] * ("endpoint" in args.compressor)
    require_ready(config, role_names=roles)
    command_ready()
    dataset = Path(args.dataset) if args.dataset else None
    result = run_eval(
        config, args.compressor, split=args.split, dataset=dataset, prefixes=args.prefixes
    )
    print(result.summary_text())
    return 0


def view_command(args: argparse.Namespace) -> int:
    from builder.view.write import write_view

    path, steps = write_view(Path(args.out), Path(args.to) if args.to else None)
    print(f"wrote {path} ({steps} steps)")
    return 0


def calibrate_command(args: argparse.Namespace) -> int:
    from builder.calibrate import calibrate
    from builder.config import load_config
    from builder.config.stages import GateConfig

    theta, source = GateConfig().threshold, "the default gate.threshold"
    if args.config:
        theta, source = load_config(Path(args.config), []).gate.threshold, args.config
    text = calibrate(
        [Path(one) for one in args.pairs],
        args.similarity,
        split=args.split,
        min_precision=args.min_precision,
        pipeline_theta=theta,
        pipeline_source=source,
        environments=not args.no_environment,
    )
    print(text)
    return 0


def pairs_command(args: argparse.Namespace) -> int:
    from builder.calibrate import export_pairs, write_pairs

    rows = export_pairs(Path(args.out), args.sample, seed=args.seed)
    target = Path(args.output) if args.output else Path(args.out) / "pairs_to_label.jsonl"
    write_pairs(rows, target)
    print(f"wrote {len(rows)} pairs to {target} (set 'same' and 'reason' on each line)")
    return 0


def config_command(args: argparse.Namespace) -> int:
    from builder.config import load_config
    from builder.config.describe import key_rows, keys_text
    from builder.config.loading import read_yaml

    if args.config is None:
        if args.set:
            print("error: --set needs a CONFIG to apply to", file=sys.stderr)
            return 2
        rows = key_rows()
        print(keys_text(rows, args.key, values=False))
        return 0
    path = Path(args.config)
    config = load_config(path, args.set or [])
    print(keys_text(key_rows(config, read_yaml(path), args.set or []), args.key))
    return 0
