# `make run` and `make test` set up .venv themselves on a fresh machine (Python 3.11 + pip is enough).
# `make run` installs only what a simulation needs; `make test`, `make lint` and `make studio` add the dev extras.
# `make run RUN_ARGS="--out runs/mine"` passes more options to `amphoreus simulate`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --no-input --disable-pip-version-check
SUM := $(shell cksum pyproject.toml | cut -d' ' -f1)
RUN_STAMP := $(VENV)/.installed-run-$(SUM)
DEV_STAMP := $(VENV)/.installed-dev-$(SUM)
LOG := $(VENV)/install.log
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

# One line per install step; pip's own output goes to $(LOG), whose tail is shown only if a step fails.
step = echo "  $(1)"; { $(2); } >>$(LOG) 2>&1 || { tail -n 40 $(LOG); echo "install failed: see $(LOG)"; exit 1; }

.PHONY: run test test-fast lint bench studio report clean

$(RUN_STAMP): pyproject.toml
	@echo "setting up $(VENV) (pip's output: $(LOG))"
	@test -x $(PY) || { echo "  creating $(VENV)"; python3 -m venv $(VENV); }
	@: > $(LOG)
	@$(call step,pip,$(PIP) --upgrade pip)
	@# the CPU build of torch (a local file on these machines) before sentence-transformers pulls a CUDA one
	@$(call step,torch (CPU build),$(PIP) "torch==2.13.0" || $(PIP) torch)
	@$(call step,amphoreus-graph and what a run needs,$(PIP) -e .)
	@rm -f $(VENV)/.installed-*
	@touch $@

$(DEV_STAMP): $(RUN_STAMP)
	@$(call step,dev extras (tests$(,) lint$(,) Studio$(,) Ray$(,) training),$(PIP) -e ".[dev]")
	@touch $@

, := ,

run: $(RUN_STAMP)
	$(VENV)/bin/amphoreus simulate --scenario amphoreus --cycles 2 --rounds 12 --model offline --seed 7 $(RUN_ARGS)

# `make report RUN=runs/<dir>`: the run's HTML report (the path it prints opens in a browser)
report: $(RUN_STAMP)
	$(VENV)/bin/amphoreus report $(RUN)

# LangGraph Studio's dev server over langgraph.json, reloading on code changes only (not on run output)
studio: $(DEV_STAMP)
	$(VENV)/bin/amphoreus studio

# Two workers: most of the suite's time is processes starting (torch, Ray, langgraph dev) and waiting on them, so
# two run side by side even on two cores; a module's tests share a worker, so a module's fixtures are built once.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadscope

test: $(DEV_STAMP)
	$(PYTEST)

test-fast: $(DEV_STAMP)
	$(PYTEST) -m "not slow"

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check amphoreus_graph graphs tests benchmarks tools
	$(VENV)/bin/mypy amphoreus_graph
	$(VENV)/bin/lint-imports --no-cache
	$(PY) tools/world_words.py
	$(PY) tools/commit_subjects.py

bench: $(DEV_STAMP)
	$(PY) benchmarks/society.py --json

clean:
	rm -rf $(VENV) runs .pytest_cache
