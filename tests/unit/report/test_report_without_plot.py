"""`pyguard report` without the 'plot' extra: exit status 3, the extra named, no page written (a fresh interpreter
in which importing matplotlib fails as it does when it is not installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TRACE = ROOT / "tests" / "data" / "report" / "c05498a0fdd6.jsonl"

_CODE = """
import json, sys
class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "matplotlib":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
from click.testing import CliRunner
from pyguard.cli import main
r = CliRunner().invoke(main, ["report", TRACE, "-o", "report.html"])
print(json.dumps([r.exit_code, r.output]))
"""


def test_without_matplotlib_it_names_the_extra_and_writes_nothing(tmp_path: Path) -> None:
    code = textwrap.dedent(_CODE).replace("TRACE", repr(str(TRACE)))
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # this checkout's pyguard, whatever the venv's install points at
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    exit_code, output = json.loads(done.stdout.strip().splitlines()[-1])
    assert exit_code == 3 and "pip install 'pyguard[plot]'" in output and "(matplotlib)" in output, output
    assert not (tmp_path / "report.html").exists()
