#!/usr/bin/env bash
# Sets up pyguard in this checkout, idempotently. Two levels:
#   scripts/setup.sh core   (make demo)  a virtual environment in .venv with pyguard installed (editable) with its core
#                                        dependencies only (pydantic, numpy, rich, click, JPype1, tomli-w), and the
#                                        Java bridge;
#   scripts/setup.sh [all]  (make test, make setup)  the same with every extra (plot, stats, otel, columnar, ray, fast:
#                                        `all`) and the test, dev and container tools.
# The Java bridge: built by Maven, its jar and runtime dependencies copied into pyguard/_jars.
# Needs: python3 >= 3.11, a JDK >= 17 (JAVA_HOME or java on PATH), Maven (mvn).
set -euo pipefail
cd "$(dirname "$0")/.."

level=${1:-all}
case "$level" in
  core) spec='.' ;;
  all) spec='.[all,test,dev,containers]' ;;
  *) echo "setup: unknown level '$level': use 'core' (make demo) or 'all' (make test)" >&2; exit 2 ;;
esac

need() { command -v "$1" >/dev/null 2>&1 || { echo "setup: '$1' not found on PATH. $2" >&2; exit 2; }; }
need python3 "Install Python 3.11 or newer."
need mvn "Install Maven 3.8+ (Debian: apt-get install maven)."
need java "Install a JDK 17+ (Debian: apt-get install openjdk-17-jdk) or set JAVA_HOME."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PY" -m venv .venv
fi
# The bridge build and the pip install fetch from different servers, one file at a time: run them side by side.
# `core` skips compiling the Java tests (make test compiles and runs them).
mvn_args=(-f java/pom.xml package -DskipTests)
[ "$level" = core ] && mvn_args+=(-Dmaven.test.skip=true)
echo "setup: building the Java bridge (mvn -q ${mvn_args[*]})" >&2
bash scripts/mvnq "${mvn_args[@]}" &   # mvn -q -B without the colour codes Maven 3.8 leaks
maven=$!
trap 'kill "$maven" 2>/dev/null || true' EXIT

# Reinstall only when pyproject.toml changed since the last install of this level (or of `all`, which covers `core`).
stamp=.venv/.pyguard-installed-$level
full=.venv/.pyguard-installed-all
if { [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; } && { [ ! -f "$full" ] || [ pyproject.toml -nt "$full" ]; }; then
  if [ "$level" = core ]; then
    echo "setup: installing pyguard with its core dependencies into .venv (make test installs every extra)" >&2
  else
    echo "setup: installing pyguard with its extras (all: plot, stats, otel, columnar, ray, fast; test, dev, containers) into .venv" >&2
  fi
  .venv/bin/python -m pip install -q --disable-pip-version-check -e "$spec"
  touch "$stamp"
fi
if ! wait "$maven"; then
  trap - EXIT
  echo "setup: the Java bridge build failed (its output is above); run: bash scripts/mvnq ${mvn_args[*]}" >&2
  exit 1
fi
trap - EXIT
