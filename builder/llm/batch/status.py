"""`nap-builder status OUT`: the batch jobs of a run folder, read from its ledger alone."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from builder.llm.batch.ledger import BatchLedger

LEDGER = Path("_state") / "batches.sqlite"


def format_status(out_dir: Path, now: float | None = None) -> str:
    """One line per job (open ones first): provider, role, job id, status, age, progress."""
    path = out_dir / LEDGER
    if not path.exists():
        return f"{out_dir}: no batch jobs (no {LEDGER})"
    ledger = BatchLedger(path)
    try:
        jobs = ledger.jobs()
        line_states = {
            job.handle: Counter(ln.state for ln in ledger.lines(job.handle)) for job in jobs
        }
        refused, failed = ledger.reasons("refused"), ledger.reasons("failed")
    finally:
        ledger.close()
    now = time.time() if now is None else now
    open_jobs = [j for j in jobs if j.status in ("submitting", "submitted")]
    lines = [f"{out_dir}: {len(jobs)} batch jobs, {len(open_jobs)} pending"]
    for job in sorted(
        jobs, key=lambda j: (j.status not in ("submitting", "submitted"), j.created_at)
    ):
        states = line_states[job.handle]
        counts = ", ".join(f"{k} {v}" for k, v in sorted(job.progress.items()) if k != "why")
        lines.append(
            f"  {job.provider:<9} {job.role:<7} {job.job_id or '(not recorded)':<24} "
            f"{job.status:<18} age {_age(now - job.created_at):>6}  polls {job.polls:<3} "
            f"requests {sum(states.values())} (done {states['done']}, pending "
            f"{states['pending']}, failed {states['failed']}, refused {states['refused']})"
            + (f"  [{counts}]" if counts else "")
        )
    for title, reasons in (("refused (never sent again)", refused), ("failed", failed)):
        if reasons:
            lines.append(f"  {title}:")
            lines += [f"    {n} x {reason}" for reason, n in list(reasons.items())[:10]]
    return "\n".join(lines)


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
