# inferwatch — the two commands a newcomer needs:  make demo   and   make test
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# Two install steps, each remembered by a stamp: what the demo runs, then (for make test) the test tools on top.
RUNTIME := $(VENV)/.installed-runtime
TESTING := $(VENV)/.installed-test
PIP := $(BIN)/python -m pip install --quiet -c constraints.txt

.PHONY: demo test venv bench clean

# The virtualenv with both distributions, at the versions pinned in constraints.txt, and the demo's clients.
$(RUNTIME): pyproject.toml sdk/pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found (set PYTHON=...)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(PIP) -e ./sdk -e '.[demo]'
	touch $(RUNTIME)

# The test suite's extras (pytest, hypothesis, Presidio and spaCy, Playwright, the instrumentations) on top.
$(TESTING): $(RUNTIME)
	$(PIP) -e ./sdk -e '.[test]'
	touch $(TESTING)

venv: $(TESTING)

# The embedded platform (chDB in ./.inferwatch/data) with generated traffic flowing into it; runtime packages only.
demo: $(RUNTIME)
	mkdir -p .inferwatch/data
	INFERWATCH_DATA_DIR=.inferwatch/data $(BIN)/inferwatch-server up --demo-traffic

# The whole test suite.
test: $(TESTING)
	$(BIN)/python -m pytest

bench: $(TESTING)
	$(BIN)/python bench/ingest.py

clean:
	rm -rf $(VENV) .inferwatch .pytest_cache
