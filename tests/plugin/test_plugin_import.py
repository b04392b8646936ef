"""The plugin is cheap to import: no jpype, no JVM edge, no engine at import or collection time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("jpype", "_jpype", "pyguard.jvm", "pyguard.live.guard", "pyguard.engine", "numpy", "testcontainers", "docker")


def test_importing_the_plugin_imports_no_jvm_engine_or_containers():
    code = (
        "import json, sys; import pyguard.pytest_plugin; "
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_collecting_tests_that_use_the_jvm_fixtures_starts_no_jvm(pytester: pytest.Pytester):
    pytester.makeconftest(
        f"""
        import sys

        def pytest_collection_finish(session):
            loaded = sorted(m for m in sys.modules if m.split('.')[0] in ("jpype", "_jpype") or m in {HEAVY!r})
            print("LOADED-AT-COLLECTION=" + ",".join(loaded))
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.pyguard(task_type="lookup", max_iterations=5)
        def test_agent(pyguard_guard, pyguard_scripted_model, pyguard_openai_server):
            pass
        """
    )
    result = pytester.runpytest_subprocess("--collect-only", "-s")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*<Function test_agent>*", "LOADED-AT-COLLECTION="])
