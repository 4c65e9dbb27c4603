"""Where the real sample trajectories live (read-only, beside the repository)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Beside the checkout, or two levels up from a worktree (/work/wt/<name> -> /work/shared).
SHARED = next(
    (p for p in (r / "shared" / "trajectories" for r in REPO.parents[:2]) if p.is_dir()),
    REPO.parent / "shared" / "trajectories",
)
SAMPLES = REPO / "builder" / "samples"
