# Two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# `make run HOST=0.0.0.0 PORT=9000 DB=sqlite:///var/other.db` overrides these.
HOST ?= 127.0.0.1
PORT ?= 8080
DB ?= sqlite:///var/cronplane.db

.PHONY: run test lint typecheck pytest docs bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	# Without its cron-descriptor<2 pin (see pyproject's test extra).
	$(BIN)/python -m pip install -q --no-deps 'django-celery-beat>=2.6,<3'
	touch $(STAMP)

## run: the product on SQLite (var/cronplane.db) with the example app installed.
run: $(STAMP)
	mkdir -p var
	$(BIN)/cronplane --version
	CRONPLANE_DATABASE_URL=$(DB) CRONPLANE_BIN=$(BIN) HOST=$(HOST) PORT=$(PORT) bash examples/run.sh

## test: ruff, mypy --strict on src/, then pytest.
test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy src

pytest: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

## docs: regenerate docs/codes.md from the registry.
docs: $(STAMP)
	$(BIN)/python -m cronplane.codes > docs/codes.md

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis
