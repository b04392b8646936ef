#!/usr/bin/env bash
# Sets up everything pyguard needs in this checkout, idempotently:
#   - a virtual environment in .venv with pyguard installed (editable) with every extra (plot, stats, otel, columnar,
#     ray: `all`) and the test, dev and container tools;
#   - the Java bridge built by Maven, its jar and runtime dependencies copied into pyguard/_jars.
# Needs: python3 >= 3.11, a JDK >= 17 (JAVA_HOME or java on PATH), Maven (mvn).
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "setup: '$1' not found on PATH. $2" >&2; exit 2; }; }
need python3 "Install Python 3.11 or newer."
need mvn "Install Maven 3.8+ (Debian: apt-get install maven)."
need java "Install a JDK 17+ (Debian: apt-get install openjdk-17-jdk) or set JAVA_HOME."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PY" -m venv .venv
fi
# Reinstall only when pyproject.toml changed since the last install.
stamp=.venv/.pyguard-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing pyguard with its extras (all: plot, stats, otel, columnar, ray, fast; test, dev, containers) into .venv" >&2
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[all,test,dev,containers]'
  touch "$stamp"
fi
echo "setup: building the Java bridge (mvn -q -f java/pom.xml package -DskipTests)" >&2
bash scripts/mvnq -f java/pom.xml package -DskipTests   # mvn -q -B without the colour codes Maven 3.8 leaks
