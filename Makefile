# nap-builder: `make demo` runs the main job on the embedded model, `make test` runs the tests.
# Both set up everything they need on a fresh machine (virtualenv, llama.cpp, the Gemma GGUF).
# llama.cpp is built without CPU-specific paths (x86-64-v3); NAP_LLAMA_CPU=native opts in.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_OUT ?= out/demo
TRL := trl==1.16.0

.PHONY: setup bytecode test test-deps check lint types demo bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/python -m builder.llm.native_build $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local,dev,ray]'
	$(BIN)/pip install --quiet --no-deps $(TRL)  # trl.data_utils needs no torch; trl's deps would pull it
	$(BIN)/python -m builder.llm.model_files
	$(MAKE) --no-print-directory bytecode
	touch $(STAMP)

# The project's own modules compiled ahead, as a wheel install would have them: an editable
# install leaves them to the first import, which never writes them where
# PYTHONDONTWRITEBYTECODE is set, and every run then compiles them again (~10-30 ms of start).
bytecode:
	@$(BIN)/python -m compileall -q builder schemas >/dev/null

# Headless Chromium for the view test (tests/view) and tmux for the terminal test
# (tests/run/test_terminal.py): installed with apt-get only when missing and we are root;
# elsewhere those tests skip and say how to install them.
test-deps:
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	command -v tmux >/dev/null || missing="$$missing tmux"; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

test: setup test-deps
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check builder schemas tests benchmarks
	$(BIN)/ruff format --check builder schemas tests benchmarks

types: setup
	$(BIN)/mypy builder schemas

check: lint types test

demo: setup bytecode
	$(BIN)/nap-builder run pipelines/demo.yaml --set output.dir=$(DEMO_OUT)
	$(BIN)/nap-builder publish $(DEMO_OUT) --to $(DEMO_OUT)-dataset
	$(BIN)/python -c "import datasets; print(datasets.load_dataset('$(DEMO_OUT)-dataset', 'prompt_completion'))"

bench: setup test-deps bytecode
	PYTHONPATH=. $(BIN)/python benchmarks/bench_ingest.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_llm.py
	PYTHONPATH=. $(BIN)/python benchmarks/agreement.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_run.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_side_by_side.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_scale.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_scrub.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_prepare.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_ray.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_likelihood.py
	PYTHONPATH=. $(BIN)/python benchmarks/bench_view.py
	PYTHONPATH=. $(BIN)/python benchmarks/verdicts.py

clean:
	rm -rf out .bench .pytest_cache .mypy_cache .ruff_cache
