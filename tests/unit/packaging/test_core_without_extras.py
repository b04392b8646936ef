"""pyguard on its core dependencies only: scipy and matplotlib are the 'stats' and 'plot' extras.

Each test runs a fresh interpreter in which importing scipy or matplotlib fails as it does when the package is not
installed (a meta-path finder refuses them), so what the core needs and what the extras' messages say is checked
without a second virtual environment (the wheel test, scripts/wheel_test.sh, does that with a real one).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MIXED = ROOT / "tests" / "data" / "mixed_runs.jsonl"

_BLOCK = """
import sys
class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("scipy", "matplotlib"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
"""


def _run(body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    code = _BLOCK + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False
    )


def test_every_module_imports_and_the_core_commands_run_without_scipy_and_matplotlib(tmp_path):
    r = _run(
        f"""
        import importlib, json, pkgutil
        import pyguard
        from click.testing import CliRunner
        from pyguard.cli import main
        failed = []
        for m in pkgutil.walk_packages(pyguard.__path__, "pyguard."):
            try:
                importlib.import_module(m.name)
            except ImportError as e:
                failed.append(f"{{m.name}}: {{e}}")
        codes = {{}}
        for name, args in {{
            "replay": ["replay", {str(MIXED)!r}, "--json"],
            "calibrate": ["calibrate", {str(MIXED)!r}, "--failure-cost", "20000", "--json"],
            "check": ["check", {str(MIXED)!r}, "--max-stall-rate", "0.9", "--json"],
            "write-baseline": ["check", {str(MIXED)!r}, "--write-baseline", "base.json", "--json"],
        }}.items():
            codes[name] = CliRunner().invoke(main, args).exit_code
        loaded = sorted(m for m in ("scipy", "matplotlib") if m in sys.modules)
        print(json.dumps({{"failed": failed, "codes": codes, "loaded": loaded}}))
        """,
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["failed"] == [], out["failed"]
    assert out["codes"] == {"replay": 0, "calibrate": 0, "check": 0, "write-baseline": 0}, out
    assert out["loaded"] == []


def test_the_stats_and_plot_features_name_their_extra(tmp_path):
    r = _run(
        f"""
        import json
        from click.testing import CliRunner
        from pyguard.cli import main
        from pyguard.base.errors import MissingExtraError
        from pyguard.check.stats import proportion_increase_test
        out = {{}}
        try:
            proportion_increase_test(9, 20, 2, 20)
        except MissingExtraError as e:
            out["stats"] = str(e)
        from pyguard.tune import tune
        try:
            tune([])
        except MissingExtraError as e:
            out["tune"] = str(e)
        runner = CliRunner()
        made = runner.invoke(main, ["check", {str(MIXED)!r}, "--write-baseline", "base.json"])
        gate = runner.invoke(main, ["check", {str(MIXED)!r}, "--baseline", "base.json"])
        cal = runner.invoke(main, ["calibrate", {str(MIXED)!r}, "--failure-cost", "20000", "--out", "report"])
        tun = runner.invoke(main, ["tune", {str(MIXED)!r}, "--report", "tune_report"])
        import os
        out["cli"] = {{
            "made": made.exit_code,
            "gate": [gate.exit_code, gate.output],
            "calibrate": [cal.exit_code, cal.output, os.path.exists("report")],
            "tune": [tun.exit_code, tun.output, os.path.exists("tune_report")],
        }}
        print(json.dumps(out))
        """,
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    stats_msg = (
        "needs the optional extra 'stats' (scipy), which is not installed (no module 'scipy'): "
        "pip install 'pyguard[stats]'"
    )
    assert out["stats"] == "pyguard check's baseline tests " + stats_msg
    assert out["tune"] == "pyguard tune's intervals " + stats_msg
    cli = out["cli"]
    assert cli["made"] == 0  # writing a baseline needs no test
    code, output = cli["gate"]
    assert code == 3 and "pip install 'pyguard[stats]'" in output, output
    code, output, created = cli["calibrate"]
    assert code == 3 and "pip install 'pyguard[plot]'" in output and "(matplotlib)" in output, output
    assert not created  # said before anything was written
    code, output, created = cli["tune"]
    assert code == 3 and "pip install 'pyguard[plot]'" in output, output
    assert not created
