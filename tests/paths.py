"""Where the real sample trajectories live (read-only, beside the repository)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# beside the repository (../shared); from a worktree under wt/ it is one level further up
SHARED = next(
    (
        p / "shared" / "trajectories"
        for p in REPO.parents
        if (p / "shared" / "trajectories").is_dir()
    ),
    REPO.parent / "shared" / "trajectories",
)
SAMPLES = REPO / "builder" / "samples"
