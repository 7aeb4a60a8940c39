# pymq-ref — the two commands are `make book` and `make test` (see README.md).
# Every target installs what it needs first (tools/bootstrap.sh: apt packages, .venv,
# pip install -r requirements.txt and -e .); that step is a no-op when already done.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

VENV   := $(CURDIR)/.venv
PY     := $(VENV)/bin/python
# jupyter-book always writes the book here; HTML (what `make serve` serves) defaults to it.
BOOK_HTML := _build/html
HTML   := $(BOOK_HTML)
PORT   ?= 8000
# The venv's tools and its python3 kernelspec come first, whatever else is installed.
export PATH := $(VENV)/bin:$(PATH)
export JUPYTER_PATH := $(VENV)/share/jupyter
export PYDEVD_DISABLE_FILE_VALIDATION := 1

# Inputs of the rendered book: rebuilt by `make test` only when one of them changed.
BOOK_INPUTS := _config.yml _toc.yml requirements.txt \
  $(shell find notebooks book pymq_ref -type f \
      -not -path '*/__pycache__/*' -not -path '*/.ipynb_checkpoints/*' 2>/dev/null)

.PHONY: help setup setup-browser book serve lab notebooks test test-unit test-nbval test-browser clean distclean corpus bench

help: ## list the targets
	@echo "pymq-ref — RocketMQ, byte by byte"
	@echo
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

setup: ## install system packages (graphviz, java) and the .venv; fast when done
	@tools/bootstrap.sh

setup-browser: ## setup + chromium (for the browser test)
	@tools/bootstrap.sh --browser

book: setup ## build the book from scratch, executing every notebook (warnings are errors)
	@$(MAKE) build-book
	@echo
	@echo "Book built: open file://$(CURDIR)/$(BOOK_HTML)/index.html  (or run: make serve)"

# The build itself, shared by `make book` (always) and `make test` (only if stale).
.PHONY: build-book
build-book:
	@$(PY) tools/check_toc.py
	@$(PY) tools/reference.py
	@echo "[book] jupyter-book build --all (executes every notebook) ..."
	@start=$$(date +%s); \
	  rm -rf $(BOOK_HTML); \
	  $(VENV)/bin/jupyter-book build . --all -W --keep-going; \
	  touch $(BOOK_HTML)/.pymq-built; \
	  echo "[book] built in $$(( $$(date +%s) - start )) s"

$(BOOK_HTML)/.pymq-built: $(BOOK_INPUTS)
	@$(MAKE) build-book

# HTML=<dir> serves another built copy; it is never built or deleted here (`make book`
# writes only _build/html), so a dir without the .pymq-built stamp is an error.
serve: setup ## serve the built book on http://127.0.0.1:8000/ (PORT=... to change; builds it if missing)
	@if [ ! -f '$(HTML)/.pymq-built' ]; then \
	  if [ '$(origin HTML)' = 'command line' ]; then \
	    echo "make serve: HTML=$(HTML) is not a built book (no .pymq-built in it)" >&2; exit 2; \
	  fi; \
	  $(MAKE) book; \
	fi
	@echo "Serving $(HTML) at http://127.0.0.1:$(PORT)/  (Ctrl-C to stop)"
	@$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory '$(HTML)'

lab: setup ## JupyterLab on notebooks/, bound to 127.0.0.1 (LAB_PORT=... to choose the port, LAB_ARGS=... more options)
	@$(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=notebooks --no-browser \
	    $(if $(LAB_PORT),--ServerApp.port=$(LAB_PORT)) $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

notebooks: setup ## re-execute every notebook in place, then strip volatile metadata (keeps outputs)
	@$(PY) tools/nbtool.py execute

test: setup-browser ## run everything: unit/property tests, nbval, then the rendered-book browser test
	@start=$$(date +%s); \
	  $(MAKE) test-unit; \
	  $(MAKE) test-nbval; \
	  $(MAKE) $(BOOK_HTML)/.pymq-built; \
	  $(MAKE) test-browser; \
	  echo "[test] all passed in $$(( $$(date +%s) - start )) s"

# pytest exits 5 when it collects nothing (e.g. no tests written yet): that is not a failure.
test-unit: ## pytest tests/ (unit, property, integration), without the browser test
	@echo "[test] pytest tests/"
	@$(PY) -m pytest tests --ignore=tests/test_book_render.py -q || [ $$? -eq 5 ]

test-nbval: ## nbval over every notebook in notebooks/ (policy: README, "Notebook outputs")
	@echo "[test] notebooks carry no volatile metadata (tools/nbtool.py check)"
	@$(PY) tools/nbtool.py check
	@echo "[test] nbval notebooks/"
	@$(PY) -m pytest notebooks --nbval-lax --nbval-current-env \
	    --nbval-sanitize-with tests/nbval_sanitize.cfg -q || [ $$? -eq 5 ]

test-browser: ## headless chromium over the built book in _build/html (build it first)
	@echo "[test] browser test on $(BOOK_HTML)"
	@$(PY) -m pytest tests/test_book_render.py -q

corpus: setup ## regenerate the golden corpus in corpus/ (deterministic; see corpus/README.md)
	@$(PY) corpus/generate.py

bench: setup ## run every benchmark in bench/ (ratios vs a baseline of the same run; QUICK=1 for --quick)
	@mkdir -p _build/bench
	@for b in bench/bench_*.py; do $(PY) $$b $(if $(QUICK),--quick) || exit 1; done

clean: ## remove build outputs and caches (keeps .venv)
	rm -rf _build .pytest_cache .hypothesis *.egg-info
	find . -path ./.venv -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -print0 | xargs -0 rm -rf

distclean: clean ## clean + remove the .venv
	rm -rf .venv
