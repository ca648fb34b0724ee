# The README's two set-up commands are `make run` and `make test`; each creates the
# virtual environment and installs what it needs first: `make run` the runtime
# dependencies only, `make test` (and `lint`, `bench`, `install`) the test tools too.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.lore-run-installed
TEST_STAMP := $(VENV)/.lore-test-installed
# Test processes: one per core (`make test TEST_WORKERS=0` runs the suite in this one).
TEST_WORKERS ?= auto

.PHONY: run test lint bench install image deploy-check clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c constraints.txt -e .
	@touch $(RUN_STAMP)

$(TEST_STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	@touch $(TEST_STAMP)

install: $(TEST_STAMP)

run: $(RUN_STAMP)
	$(BIN)/lore run

test: $(TEST_STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) $(PYTEST_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/mkdocs build --strict --quiet --site-dir .site && rm -rf .site

bench: $(TEST_STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# The container image, built and smoke-tested (minutes; BASE and IMAGE as .ci/image says).
image: $(TEST_STAMP)
	bash .ci/image

# compose.yaml and the Kubernetes manifests against their schemas (fetches dclint and kubernetes-validate).
deploy-check:
	bash .ci/deploy-check

clean:
	rm -rf $(VENV) .site .mypy_cache .ruff_cache .pytest_cache *.egg-info
