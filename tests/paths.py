"""Where the real sample trajectories live (read-only, beside the repository)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "trajectories"
SAMPLES = REPO / "builder" / "samples"
