"""Where the real sample trajectories live (read-only, beside the repository)."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_BESIDE = REPO.parent / "shared" / "trajectories"
# A git worktree sits one level deeper than the main checkout; NAP_SHARED overrides both.
SHARED = Path(
    os.environ.get("NAP_SHARED")
    or (_BESIDE if _BESIDE.is_dir() else REPO.parents[1] / "shared" / "trajectories")
)
SAMPLES = REPO / "builder" / "samples"
