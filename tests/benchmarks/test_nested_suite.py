"""The nested benchmark suite (a supervisor over a stuck sub-agent) runs in quick mode and prints well-formed JSON.
No timing, no figures asserted beyond the shape and the direction the suite exists to show."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"


def test_nested_quick_prints_one_well_formed_json_object():
    done = subprocess.run(
        [sys.executable, str(RUN), "nested", "--quick", "--json"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["suite"] == "nested" and result["quick"] is True
    assert result["command"].endswith("python benchmarks/run.py nested --quick --json")
    (row,) = result["rows"]
    unguarded, guarded, budget = row["unguarded"], row["guarded"], row["tree_budget"]
    assert unguarded["error"] is None and unguarded["model_calls"] > guarded["model_calls"] > 0
    assert unguarded["tokens"] > guarded["tokens"] > 0
    assert guarded["outcome"] == "stalled" and guarded["invocations"] >= 2
    assert budget["outcome"] == "expired" and budget["model_calls"] <= budget["model_calls_limit"]
