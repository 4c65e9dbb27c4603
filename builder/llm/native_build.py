"""Build and install llama-cpp-python without CPU-specific code paths (stdlib only: runs before
the project is installed).

Why: llama.cpp's default `GGML_NATIVE=ON` compiles for the build machine's CPU. Machines of the
same kind differ, and a build on a CPU that advertises AMX crashed in `ggml_backend_amx_mul_mat`
at the first matrix multiply. The default here is an x86-64-v3 baseline (AVX2, FMA, F16C, BMI2;
no AVX-512, no AMX), or plain SSE on CPUs without AVX2.

pip's wheel cache is keyed by the sdist URL, its hash and the interpreter, not by `CMAKE_ARGS`,
so a wheel cached from an earlier native build would be reused silently. The package is built
with `--no-cache-dir` into our own cache, keyed by version, interpreter and flags.

`NAP_LLAMA_CPU=native` opts in to a build for this CPU (`GGML_NATIVE=ON`); `v3` and `generic`
force a baseline. Run: `python -m builder.llm.native_build PYTHON`.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from builder.storage.user_cache import user_cache_root

LLAMA_VERSION = "0.3.36"
CPU_ENV = "NAP_LLAMA_CPU"
OFF_EXTRAS = ["AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16", "AVX_VNNI"]
AMX = ["AMX_TILE", "AMX_INT8", "AMX_BF16"]
FORBIDDEN_PORTABLE = ("AVX512", "AMX")  # names in llama_print_system_info() that must be absent


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def choose_level(requested: str | None, flags: set[str], machine: str) -> str:
    """`native`, `v3` or `generic`: what the build targets."""
    if requested:
        if requested not in {"native", "v3", "generic"}:
            raise SystemExit(f"{CPU_ENV}={requested!r}: use native, v3 or generic")
        return requested
    if machine not in {"x86_64", "amd64", "AMD64"}:
        return "generic"
    return "v3" if {"avx2", "fma", "f16c"} <= flags else "generic"


def cmake_args(level: str, machine: str) -> list[str]:
    if level == "native":
        return ["-DGGML_NATIVE=ON"]
    args = ["-DGGML_NATIVE=OFF", "-DGGML_CPU_ALL_VARIANTS=OFF", "-DGGML_BACKEND_DL=OFF"]
    if machine not in {"x86_64", "amd64", "AMD64"}:
        return args
    on = level == "v3"
    for name in ["SSE42", "AVX"]:
        args.append(f"-DGGML_{name}=ON")
    for name in ["AVX2", "FMA", "F16C", "BMI2"]:
        args.append(f"-DGGML_{name}={'ON' if on else 'OFF'}")
    args += [f"-DGGML_{name}=OFF" for name in OFF_EXTRAS + AMX]
    return args


def cache_dir() -> Path:
    return user_cache_root() / "wheels"


def wheel_dir(python: str, args: list[str]) -> Path:
    interpreter = subprocess.run(
        [python, "-c", "import sys; print(sys.implementation.cache_tag)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    key = json.dumps({"version": LLAMA_VERSION, "py": interpreter, "cmake": args})
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_dir() / f"llama-cpp-python-{LLAMA_VERSION}-{interpreter}-{digest}"


def build(python: str, target: Path, args: list[str]) -> Path:
    tmp = target.with_name(target.name + ".partial")
    tmp.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CMAKE_ARGS=" ".join(args), FORCE_CMAKE="1")
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    print(f"building llama-cpp-python {LLAMA_VERSION} with CMAKE_ARGS={env['CMAKE_ARGS']}")
    subprocess.run(
        [
            python, "-m", "pip", "wheel", "--quiet", "--no-cache-dir", "--no-deps",
            "--no-binary", "llama-cpp-python", f"llama-cpp-python=={LLAMA_VERSION}",
            "-w", str(tmp),
        ],
        check=True,
        env=env,
    )  # fmt: skip
    tmp.replace(target)
    return target


def system_info(python: str) -> str:
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        how = f"killed by signal {-done.returncode}" if done.returncode < 0 else "failed"
        raise SystemExit(f"llama_cpp does not import ({how}):\n{done.stderr}")
    return done.stdout.strip()


def enabled(info: str) -> set[str]:
    """Names llama.cpp reports as compiled in (`AVX2 = 1` or bare `AVX2`)."""
    names = set()
    for part in info.replace("|", "\n").splitlines():
        key, _, value = part.partition("=")
        key = key.strip()
        if key and value.strip() in {"1", ""}:
            names.add(key.split(":")[-1].strip())
    return names


def main(argv: list[str]) -> int:
    python = argv[0] if argv else sys.executable
    machine = platform.machine()
    level = choose_level(os.environ.get(CPU_ENV) or None, cpu_flags(), machine)
    args = cmake_args(level, machine)
    target = wheel_dir(python, args)
    wheels = sorted(target.glob("llama_cpp_python-*.whl")) if target.is_dir() else []
    if not wheels:
        build(python, target, args)
        wheels = sorted(target.glob("llama_cpp_python-*.whl"))
    # A build of the same version from elsewhere would count as installed: replace it.
    subprocess.run([python, "-m", "pip", "uninstall", "--quiet", "-y", "llama-cpp-python"])
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(wheels[-1])], check=True)
    info = system_info(python)
    print(f"llama.cpp ({level}): {info}")
    bad = [name for name in enabled(info) if name.startswith(FORBIDDEN_PORTABLE)]
    if level != "native" and bad:
        print(f"error: portable build has CPU-specific paths {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
