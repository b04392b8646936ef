# The two Quickstart commands (README.md): `make demo` and `make test`. Both work on a fresh clone.
.PHONY: setup demo test java-test py-test

setup:
	bash scripts/setup.sh

demo: setup
	.venv/bin/pyguard demo

java-test: setup
	mvn -q -B -f java/pom.xml test

py-test: setup
	.venv/bin/python -m pytest -p no:cacheprovider

test: java-test py-test
