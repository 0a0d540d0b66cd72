# inferwatch — the two commands a newcomer needs:  make demo   and   make test
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test venv bench clean

# Create the virtualenv and install both distributions with the pinned versions in constraints.txt.
$(STAMP): pyproject.toml sdk/pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found (set PYTHON=...)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ./sdk -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# The embedded platform (chDB in ./.inferwatch/data) with generated traffic flowing into it.
demo: $(STAMP)
	mkdir -p .inferwatch/data
	INFERWATCH_DATA_DIR=.inferwatch/data $(BIN)/inferwatch-server up --demo-traffic

# The whole test suite.
test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/ingest.py

clean:
	rm -rf $(VENV) .inferwatch .pytest_cache
