#!/usr/bin/env bash
# The wheel test (make wheel-test, run by .ci/run): what a user who runs `pip install pyguard-*.whl` gets.
#   1. build the wheel from this checkout (setup.py runs Maven first when pyguard/_jars is empty);
#   2. check it carries the bridge jar, py.typed and the LICENSE;
#   3. install it into a fresh virtual environment outside the repository, core dependencies only (no extra), from
#      PyPI through pip's cache;
#   4. with a PATH that has no `mvn` (only the venv and `java`), from a directory outside the repository, run
#      `pyguard demo` and `python -m pyguard --help` and check their exit codes and output.
# Needs: what `make setup` needs, and PyPI (or pip's cache) for the wheel's dependencies.
# KEEP=1 keeps the temporary directory and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=.venv/bin/python

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pyguard-wheel-test.XXXXXX")
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "wheel-test: kept $tmp" >&2; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
fail() { echo "wheel-test: FAILED: $*" >&2; exit 1; }
start=$(date +%s)

phase() { echo "wheel-test: [$(($(date +%s) - start)) s] $*" >&2; }
phase "building the wheel (pip wheel --no-deps .)"
"$PY" -m pip wheel -q --disable-pip-version-check --no-deps . -w "$tmp/dist" >&2
wheel=$(ls "$tmp"/dist/pyguard-*.whl)
"$PY" - "$wheel" <<'EOF' || fail "the wheel misses files (above)"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = {
    "the bridge jar": lambda n: n.startswith("pyguard/_jars/pyguard-bridge-") and n.endswith(".jar"),
    "LangChain4j": lambda n: n.startswith("pyguard/_jars/langchain4j-core-"),
    "py.typed": lambda n: n == "pyguard/py.typed",
    "the scenario format": lambda n: n == "pyguard/scenarios/README.md",
    "__main__": lambda n: n == "pyguard/__main__.py",
    "the LICENSE": lambda n: n.endswith(".dist-info/licenses/LICENSE"),
}
missing = [what for what, test in need.items() if not any(test(n) for n in names)]
for what in missing:
    print(f"wheel-test: {sys.argv[1]} has no {what}", file=sys.stderr)
sys.exit(1 if missing else 0)
EOF

phase "installing $(basename "$wheel") into a fresh venv in $tmp (core dependencies only)"
# The venv gets no pip of its own (the checkout's pip installs into it) and no .pyc compiled ahead: both only cost time.
"$PY" -m venv --without-pip "$tmp/venv"
"$PY" -m pip --python "$tmp/venv/bin/python" install -q --no-compile --disable-pip-version-check "$wheel" >&2

# A PATH with the venv and java only: no mvn, nothing of the checkout.
mkdir -p "$tmp/bin" "$tmp/work"
java=$(command -v java) || fail "no java on PATH (the demo needs a JDK 17+)"
ln -s "$(readlink -f "$java")" "$tmp/bin/java"
clean_env=(env -i "HOME=$tmp/work" "PATH=$tmp/venv/bin:$tmp/bin" "LANG=C.UTF-8" "TERM=dumb" "COLUMNS=120")
[ -n "${JAVA_HOME:-}" ] && clean_env+=("JAVA_HOME=$JAVA_HOME")
cd "$tmp/work"
"${clean_env[@]}" "$(command -v bash)" -c 'command -v mvn' >/dev/null 2>&1 && fail "mvn is still on the test PATH"

where=$("${clean_env[@]}" python -c 'import pyguard, importlib.util as u; print(pyguard.__file__, u.find_spec("scipy") is None and u.find_spec("matplotlib") is None)')
case "$where" in
  "$tmp/venv/"*" True") ;;
  *) fail "pyguard imported from the wrong place, or scipy/matplotlib installed with the core: $where" ;;
esac
case "$where" in "$repo"/*) fail "pyguard imported from the checkout: $where" ;; esac

phase "python -m pyguard --help"
help=$("${clean_env[@]}" python -m pyguard --help) || fail "python -m pyguard --help exited $?"
grep -q "Usage: python -m pyguard" <<<"$help" || fail "python -m pyguard --help printed: $help"
grep -q "demo" <<<"$help" || fail "python -m pyguard --help lists no demo: $help"

phase "pyguard demo --json (from $tmp/work, no mvn on PATH)"
set +e
out=$("${clean_env[@]}" pyguard demo --json 2>"$tmp/demo.err")
rc=$?
set -e
[ "$rc" = 0 ] || { cat "$tmp/demo.err" >&2; fail "pyguard demo exited $rc"; }
"$tmp/venv/bin/python" - "$out" <<'EOF' || { cat "$tmp/demo.err" >&2; fail "pyguard demo printed unexpected figures (above)"; }
import json, sys
d = json.loads(sys.argv[1])
got = (d["unguarded"]["outcome"], d["guarded"]["outcome"], d["guarded_reflection_ignored"]["outcome"])
ok = got == ("succeeded", "succeeded", "stalled") and d["guarded"]["model_calls"] < d["unguarded"]["model_calls"]
print(f"wheel-test: demo outcomes {got}, model calls {d['unguarded']['model_calls']} -> {d['guarded']['model_calls']}",
      file=sys.stderr)
sys.exit(0 if ok else 1)
EOF

size_whl=$(du -k "$wheel" | cut -f1)
size_venv=$(du -sk "$tmp/venv" | cut -f1)
phase "OK; wheel ${size_whl} KiB, the venv with the core only ${size_venv} KiB (du -sk)"
