"""Label near-miss pairs by running them (step 2 of the near-miss benchmark).

Run: `python benchmarks/near_miss_execute.py [--mirrors /work/.mirror] [--out .bench/near_miss]
[--python PY]` after `near_miss_mine.py`; `PY` runs the `python -c` sides (the labels were
made with a venv holding only mpmath 1.3.0, so SymPy imports; a missing module leaves a pair
to the hand rules). Reads `sample.jsonl`, writes `executed.jsonl` (one row per pair it
could run: both outputs and the verdict) and prints what it decided.

Which pairs: those of a mini-swe-agent run whose repository this machine has as a git mirror
(`REPOS`; Django, scikit-learn and matplotlib were too large to fetch here), where both sides
are read-only: every command is one of `READ_ONLY` (no `sed -i`, no `find -exec/-delete`, no
redirect into a file, `git` only to show things), or a `python -c` (run in a throwaway copy).

Where: a checkout of the repository at the run's base commit, found from the run's submission
diff (the commit that introduced the pre-image blob of the first file it changes: every file
the patch touches is then as the agent found it). `/testbed` in a command is that checkout.
Files the agent created earlier in its run do not exist there; such pairs come out
undecided and are labelled by hand.

Verdict (the written rule, per kind):
- shell reads, searches and listings: outputs are normalised (line-number prefixes of `nl`,
  `cat -n` and `grep -n`, file-name prefixes of `grep`, separator lines, `ls -F` marks and
  `ls -l` columns, `./` and trailing spaces removed), then compared as multisets of lines:
  `same` when at least three quarters of the lines either shows are shown by both (Jaccard
  >= 0.75), `different` below that. A side that fails (non-zero exit with an error message)
  against one that succeeds is `different`. Both failing, both empty or a timeout: undecided.
- `python -c`: exit status, stdout and stderr (memory addresses and the checkout path
  masked) are recorded. One raising where the other does not, or different printed values,
  are `different`; identical outputs are evidence only (two checks can both print `True`),
  so those pairs are labelled by hand with the outputs beside them.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from builder.similarity.bashparse import parse_script  # noqa: E402

REPOS = {
    "sympy": "sympy/sympy",
    "sphinx-doc": "sphinx-doc/sphinx",
    "pytest-dev": "pytest-dev/pytest",
    "psf": "psf/requests",
    "pydata": "pydata/xarray",
    "pylint-dev": "pylint-dev/pylint",
    "astropy": "astropy/astropy",
    "mwaskom": "mwaskom/seaborn",
}
READ_ONLY = frozenset(
    {"cat", "nl", "sed", "head", "tail", "grep", "egrep", "find", "ls", "wc", "awk", "tree",
     "du", "sort", "uniq", "cut", "echo", "cd", "git", "python", "python3", "true", "tr"}
)  # fmt: skip
GIT_READ = frozenset({"show", "log", "diff", "grep", "status", "blame", "ls-files"})
TIMEOUT_S = 20
SAME_AT = 0.75
_ADDR = re.compile(r"0x[0-9a-fA-F]{6,}")
_NUMBERED = re.compile(r"^\s*\d+(\t|[:-]|  )")
_GREP_FILE = re.compile(r"^[\w./+-]+\.\w+[:-](\d+[:-])?")
_SEPARATOR = re.compile(r"^\s*(-{2,}|={2,}|\*{2,})\s*$")


def _git(mirror: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(mirror), *args], check=True, capture_output=True, text=True
    ).stdout


def base_commit(mirror: Path, submission: str) -> str | None:
    """The commit that introduced the pre-image of the first file the submission changes."""
    for path, pre in re.findall(
        r"^diff --git a/(\S+) b/\S+\nindex ([0-9a-f]+)\.\.", submission, re.M
    ):
        if set(pre) == {"0"}:
            continue
        log = _git(mirror, "log", "--all", "--format=C %H", "--raw", "--abbrev=40",
                   "--no-renames", "--", path)  # fmt: skip
        commit = None
        for line in log.splitlines():
            if line.startswith("C "):
                commit = line[2:]
            elif line.startswith(":") and line.split()[3].startswith(pre):
                return commit
    return None


def checkout(mirror: Path, commit: str, trees: Path) -> Path:
    tree = trees / commit[:12]
    if not tree.exists():
        tmp = trees / (commit[:12] + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "--git-dir", str(mirror), "archive", commit], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        tmp.rename(tree)
    return tree


def kind_of(command: str) -> str | None:
    """`shell` (read-only commands), `python` (a `python -c`), or None (not run here)."""
    script = parse_script(command)
    if not script.ok or not script.commands:
        return None
    python = False
    for cmd in script.commands:
        name = cmd.name.rsplit("/", 1)[-1]
        if name not in READ_ONLY or cmd.heredoc is not None:
            return None
        if any(r.op in (">", ">>", "&>", ">|") and r.target != "/dev/null" for r in cmd.redirects):
            return None
        if name == "sed" and any(a.startswith(("-i", "--in-place")) for a in cmd.args):
            return None
        if name == "find" and {"-exec", "-execdir", "-delete", "-ok"} & set(cmd.args):
            return None
        if name == "git" and not (set(cmd.args[:1]) & GIT_READ):
            return None
        if name.startswith("python"):
            if "-c" not in cmd.args:
                return None
            python = True
    return "python" if python else "shell"


def run(command: str, tree: Path, python_bin: str) -> dict:
    """Exit status and output of one command in `tree` (a throwaway copy for python)."""
    work = tree
    scratch = None
    if kind_of(command) == "python":
        scratch = Path(tempfile.mkdtemp(prefix="nm-"))
        work = scratch / "testbed"
        shutil.copytree(tree, work, symlinks=True)
    text = command.replace("/testbed", str(work))
    env = {"PATH": f"{Path(python_bin).parent}:/usr/bin:/bin", "PYTHONPATH": str(work),
           "HOME": str(work), "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0"}  # fmt: skip
    try:
        done = subprocess.run(
            ["bash", "-c", text], cwd=work, env=env, capture_output=True, timeout=TIMEOUT_S
        )
        out = {
            "exit": done.returncode,
            "stdout": done.stdout.decode("utf-8", "replace"),
            "stderr": done.stderr.decode("utf-8", "replace"),
        }
    except subprocess.TimeoutExpired:
        out = {"exit": None, "stdout": "", "stderr": "timeout"}
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    for key in ("stdout", "stderr"):
        out[key] = _ADDR.sub("0xADDR", out[key].replace(str(work), "/testbed"))[:20000]
    return out


def lines_of(text: str) -> Counter[str]:
    """Output lines with numbering, file prefixes, separators and list decorations removed."""
    out: Counter[str] = Counter()
    for line in text.splitlines():
        line = line.rstrip()
        if not line.strip() or _SEPARATOR.match(line):
            continue
        line = _NUMBERED.sub("", line, count=1)
        line = _GREP_FILE.sub("", line, count=1)
        if re.match(r"^[-dlcbps][rwxsStT-]{9}[.@+]?\s", line):  # `ls -l`: keep the name
            line = line.split()[-1]
        line = line.removeprefix("./").rstrip("/*@=|")
        out[line.strip()] += 1
    return out


def failed(result: dict) -> bool:
    return result["exit"] not in (0, 1) or (result["exit"] == 1 and bool(result["stderr"].strip()))


def shell_verdict(x: dict, y: dict) -> tuple[str | None, str]:
    if x["exit"] is None or y["exit"] is None:
        return None, "timeout"
    if failed(x) and failed(y):
        return None, "both failed"
    if failed(x) != failed(y):
        return "different", "one side fails, the other does not"
    lx, ly = lines_of(x["stdout"]), lines_of(y["stdout"])
    if not lx and not ly:
        return None, "both outputs empty"
    union = sum((lx | ly).values())
    jaccard = sum((lx & ly).values()) / union
    verdict = "same" if jaccard >= SAME_AT else "different"
    return verdict, f"normalised output lines shared: {jaccard:.2f} (same at >= {SAME_AT})"


def python_verdict(x: dict, y: dict) -> tuple[str | None, str]:
    if x["exit"] is None or y["exit"] is None:
        return None, "timeout"
    for r in (x, y):
        missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", r["stderr"])
        if missing:
            return None, f"cannot run here (no module {missing.group(1)})"
    if (x["exit"] == 0) != (y["exit"] == 0):
        return "different", "one raises, the other does not"
    if x["exit"] != 0:
        ex = x["stderr"].strip().splitlines()[-1:] or [""]
        ey = y["stderr"].strip().splitlines()[-1:] or [""]
        if ex == ey:
            return None, "both raise the same error: labelled by hand"
        return "different", "both raise, with different errors"
    if x["stdout"] == y["stdout"]:
        return None, "identical output: labelled by hand (evidence only)"
    return None, "outputs differ: labelled by hand (formatting or values)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=ROOT / ".bench" / "near_miss")
    parser.add_argument("--python", default=sys.executable, help="interpreter for python -c")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (args.out / "sample.jsonl").open(encoding="utf-8")]
    trees = args.out / "trees"
    results = []
    verdicts: Counter[str] = Counter()
    bases: dict[str, str | None] = {}
    for row in rows:
        match = re.search(
            r":(swebench_results/\S+?/trajs/([a-zA-Z-]+?)__\S+?\.traj\.json)#", row["source"]
        )
        if not match or match.group(2) not in REPOS or "command" not in row["a"]:
            continue
        ka, kb = kind_of(row["a"]["command"]), kind_of(row["b"]["command"])
        if ka is None or kb is None:
            continue
        mirror = args.mirrors / REPOS[match.group(2)].replace("/", "+") / "repo"
        traj = args.out / "sources" / "gruckion+mini-swe-agent" / match.group(1)
        if match.group(1) not in bases:
            info = json.loads(traj.read_text(encoding="utf-8"))["info"]
            bases[match.group(1)] = base_commit(mirror, info.get("submission") or "")
        base = bases[match.group(1)]
        if base is None:
            continue
        tree = checkout(mirror, base, trees)
        x = run(row["a"]["command"], tree, args.python)
        y = run(row["b"]["command"], tree, args.python)
        judge = python_verdict if "python" in (ka, kb) else shell_verdict
        verdict, why = judge(x, y)
        verdicts[f"{ka}:{verdict}"] += 1
        results.append(
            {
                "key": row["key"],
                "repo": REPOS[match.group(2)],
                "commit": base,
                "verdict": verdict,
                "why": why,
                "a": x,
                "b": y,
            }
        )
        print(f"{row['key']} {row['category']:<9} {verdict or '-':<10} {why}", flush=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results)
    (args.out / "executed.jsonl").write_text(text, encoding="utf-8")
    print(dict(verdicts))


if __name__ == "__main__":
    main()
