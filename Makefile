# `make run` and `make test` set up .venv themselves on a fresh machine (Python 3.11 + pip is enough).
# `make run RUN_ARGS="--out runs/mine"` passes more options to `amphoreus simulate`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test test-fast lint bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# the CPU build of torch (a local file on these machines) before sentence-transformers pulls a CUDA one
	$(PY) -m pip install -q "torch==2.13.0" || $(PY) -m pip install -q torch
	$(PY) -m pip install -q -e ".[dev]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/amphoreus simulate --scenario amphoreus --cycles 2 --rounds 12 --model offline --seed 7 $(RUN_ARGS)

test: $(STAMP)
	$(PY) -m pytest -q

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

lint: $(STAMP)
	$(VENV)/bin/ruff check amphoreus_graph graphs tests benchmarks tools
	$(VENV)/bin/mypy amphoreus_graph
	$(VENV)/bin/lint-imports --no-cache
	$(PY) tools/world_words.py

bench: $(STAMP)
	$(PY) benchmarks/society.py --json

clean:
	rm -rf $(VENV) runs .pytest_cache
