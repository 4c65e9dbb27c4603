"""The portable llama.cpp build: flags per CPU, the installed library, the version pin."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from builder.llm import native_build

AMX_CPU = {"avx2", "fma", "f16c", "bmi2", "avx512f", "avx512bw", "amx_tile", "amx_int8"}


def test_a_cpu_with_amx_gets_the_x86_64_v3_baseline_without_amx_or_avx512() -> None:
    level = native_build.choose_level(None, AMX_CPU, "x86_64")
    args = native_build.cmake_args(level, "x86_64")
    assert level == "v3"
    assert "-DGGML_NATIVE=OFF" in args and "-DGGML_AVX2=ON" in args and "-DGGML_FMA=ON" in args
    assert "-DGGML_AMX_INT8=OFF" in args and "-DGGML_AVX512=OFF" in args
    assert not [a for a in args if re.search(r"(AMX|AVX512)\w*=ON", a)]


def test_a_cpu_without_avx2_gets_a_generic_build_and_native_is_opt_in() -> None:
    generic = native_build.cmake_args(
        native_build.choose_level(None, {"sse4_2"}, "x86_64"), "x86_64"
    )
    assert "-DGGML_AVX2=OFF" in generic and "-DGGML_FMA=OFF" in generic
    assert native_build.cmake_args("native", "x86_64") == ["-DGGML_NATIVE=ON"]
    with pytest.raises(SystemExit, match="NAP_LLAMA_CPU"):
        native_build.choose_level("fastest", AMX_CPU, "x86_64")


def test_wheels_built_with_other_flags_are_cached_apart() -> None:
    v3 = native_build.wheel_dir(sys.executable, native_build.cmake_args("v3", "x86_64"))
    native = native_build.wheel_dir(sys.executable, native_build.cmake_args("native", "x86_64"))
    assert v3 != native and v3.parent == native.parent


@pytest.mark.llama
def test_the_installed_library_has_no_amx_or_avx512_paths() -> None:
    info = native_build.system_info(sys.executable)  # in a child process
    enabled = native_build.enabled(info)
    assert "AVX2" in enabled or "SSE3" in enabled
    assert not [name for name in enabled if name.startswith(("AVX512", "AMX"))], info


def test_the_project_pins_the_version_the_build_script_builds() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    pin = re.search(r'"llama-cpp-python\[server\]==([\d.]+)"', pyproject)
    assert pin is not None and pin.group(1) == native_build.LLAMA_VERSION
    code = "import importlib.metadata as m; print(m.version('llama_cpp_python'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == native_build.LLAMA_VERSION
