# Nexus developer targets. `make setup` once, then any of the others.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
VEHICLE ?= astro_max_base
SCENE   ?= empty

.PHONY: setup run test bench gpu-check clean

$(BIN)/nexus: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0  # the CPU build, before the learn extra asks for any torch
	$(BIN)/pip install --quiet -e '.[test,learn]'
	@touch $(BIN)/nexus

setup: $(BIN)/nexus  ## create .venv and install Nexus with its pinned dependencies and the test and learn extras

run: setup  ## fly the default vehicle in the default scene on the CPU
	$(BIN)/nexus run --vehicle $(VEHICLE) --scene $(SCENE) --device cpu

test: setup  ## the whole test suite (GPU tests skip without a GPU), one worker per core, a test file per worker
	@$(BIN)/python -m compileall -q nexus >/dev/null  # every nexus process the tests start reads these, not the source
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=25

bench: setup  ## every benchmark suite, as ratios taken in one run
	$(BIN)/nexus bench --suite all

GPU_CHECK_ARGS ?=
gpu-check: setup  ## what a GPU changes, within 8 minutes (docs/benchmarking.md); exits 0 without a GPU. GPU_CHECK_ARGS="--results DIR", or "--dry-run" on the CPU
	bash tools/gpu_check.sh $(GPU_CHECK_ARGS) $(BIN)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
