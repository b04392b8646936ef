# The two Quickstart commands (README.md): `make demo` and `make test`. Both work on a fresh clone.
# `make demo` sets up the core and the Java bridge only (setup-core); `make test` and `make setup` set up everything.
.PHONY: setup setup-core demo test java-test py-test example-test lint typecheck wheel-test

setup:
	bash scripts/setup.sh all

setup-core:
	bash scripts/setup.sh core

demo: setup-core
	.venv/bin/pyguard demo

java-test: setup
	bash scripts/mvnq -f java/pom.xml test

py-test: setup
	.venv/bin/python -m pytest -p no:cacheprovider -n 2

# The example user agent project (its own Maven module) tested through the pytest plugin.
example-test: setup
	PYTHON=$(CURDIR)/.venv/bin/python bash examples/logistics-agent/run_tests.sh

test: java-test py-test example-test

# ruff (lint and format check) and mypy, configured in pyproject.toml; .ci/run runs both before the tests.
lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

typecheck: setup
	.venv/bin/mypy

# Build the wheel, install it (core dependencies only) into a fresh venv outside the repository and run `pyguard demo`
# there with no Maven on PATH (scripts/wheel_test.sh); .ci/run runs it after the tests. Needs no `make setup`: the
# wheel build runs Maven itself when pyguard/_jars is empty.
wheel-test:
	bash scripts/wheel_test.sh
