#!/usr/bin/env bash
# Build the example agent with Maven, then run its Python tests through pyguard's pytest plugin.
# Needs: JDK 17+, Maven, and pyguard installed with its bridge jars built (`make setup` at the repo root does both).
# Python: $PYTHON if set, else the repo's .venv/bin/python if it exists, else python3. Extra arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x "$repo/.venv/bin/python" ]; then py="$repo/.venv/bin/python"; else py=python3; fi
fi
mvn -q -B -f "$here/pom.xml" package -DskipTests
cd "$here"
exec "$py" -m pytest -p no:cacheprovider "$@"
