"""A live calibration of pyguard's own agents (a task's ``style``) runs each under the calibration's cap as its
``maxToolCallingRoundTrips``: when that cap ends runs, the warning says so and that raising the cap sees past it,
not to change a factory the task file does not have (``factory.round_trips_property`` is for the user's agents)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pyguard.cli import main

TASKS = """
repeats = 2
cap = 5

[[tasks]]
id = "incident"
task_type = "shipment_status"
task = "Where is order 12345? Tell me its shipment status."
scenario = "logistics_incident"
expect = "in transit"
"""


@pytest.mark.jvm
def test_the_calibrations_own_cap_is_named_with_its_fix(jvm, tmp_path: Path):
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(TASKS)
    args = ["calibrate", "--live", str(tasks), "--traces", str(tmp_path / "traces"), "--failure-cost", "5000"]
    out = CliRunner().invoke(main, [*args, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    (warning,) = [w for w in data["warnings"] if "maxToolCallingRoundTrips(5)" in w]
    assert "the calibration's cap (5" in warning and "ended 2 runs at 6 model calls" in warning, warning
    assert "raise the cap" in warning and "factory" not in warning, warning
