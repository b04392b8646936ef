"""One exit-status convention across the CLI (pyguard.cli.exit_codes): each command, each kind of ending.

The errors are raised where each command reads its input (or, for ``demo``, where it runs the agent), so every
command's own handling is what is tested; the real input paths (bad options, a failing gate) are tested as well.
"""

from pathlib import Path

import pytest
from click.testing import CliRunner

import pyguard.cli._runs as cli_runs
import pyguard.cli.demo as cli_demo
import pyguard.cli.tune as cli_tune
from pyguard.base.errors import (
    BudgetError,
    ConfigError,
    InputError,
    JvmError,
    MissingExtraError,
    RunError,
    TraceFormatError,
)
from pyguard.check.synthetic import synth_runs
from pyguard.cli import main
from pyguard.cli.exit_codes import EPILOG, ExitCode, exit_code_for
from pyguard.trace import write_runs

TRACE = Path(__file__).parents[1] / "data" / "recordings" / "pyguard_trace.jsonl"

ENDINGS = [
    (InputError("--x 0 must be positive"), ExitCode.USAGE),
    (TraceFormatError("not JSON", path="runs.jsonl", line=3), ExitCode.USAGE),
    (ConfigError("unknown key 'base_budgett'"), ExitCode.USAGE),
    (MissingExtraError("Parquet needs the optional extra 'columnar': pip install 'pyguard[columnar]'"), 3),
    (JvmError("no JDK found: set JAVA_HOME"), ExitCode.ENVIRONMENT),
    (RunError("the run could not be carried out"), ExitCode.FAILED),
    (BudgetError("an event after the run ended"), ExitCode.FAILED),
    (KeyboardInterrupt(), ExitCode.INTERRUPTED),
]

# command -> (module whose input step raises, the attribute raising, the arguments)
COMMANDS = {
    # replay, calibrate and check read RUNS through the one loader's shortcut chooser (pyguard.cli._runs.via_columns)
    "replay": (cli_runs, "load_cli_runs", [str(TRACE)]),
    "calibrate": (cli_runs, "load_cli_runs", [str(TRACE), "--failure-cost", "1"]),
    "check": (cli_runs, "load_cli_runs", [str(TRACE)]),
    "tune": (cli_tune, "load_cli_runs", [str(TRACE)]),
    "demo": (cli_demo, "run_demo", []),
}


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_the_codes_are_the_documented_ones():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 130]
    for code in ("0 ok", "1 the command's answer is no", "2 bad input", "3 the environment", "130 interrupted"):
        assert code in EPILOG


@pytest.mark.parametrize(
    ("exc", "code"), ENDINGS, ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else ""
)
def test_exit_code_for_maps_the_error_hierarchy(exc: BaseException, code: int):
    assert exit_code_for(exc) == code


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(
    ("exc", "code"), ENDINGS, ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else ""
)
def test_every_command_ends_with_the_code_of_its_error(
    monkeypatch: pytest.MonkeyPatch, command: str, exc: BaseException, code: int
):
    module, attr, args = COMMANDS[command]

    def raise_it(*a, **k):
        raise exc

    monkeypatch.setattr(module, attr, raise_it)
    result = _invoke(command, *args)
    assert result.exit_code == code, (result.output, result.exception)
    assert "Traceback" not in result.output
    if not isinstance(exc, KeyboardInterrupt):
        assert str(exc) in " ".join(result.stderr.split()), result.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unknown_option_is_a_usage_error(command: str):
    assert _invoke(command, "--no-such-option").exit_code == ExitCode.USAGE


def test_check_judges_0_when_the_gate_holds_and_1_when_it_fails(tmp_path: Path):
    path = tmp_path / "runs.jsonl"
    write_runs(path, synth_runs(200, seed=2, stalled=0.3))
    assert _invoke("check", str(path), "--max-stall-rate", "0.9").exit_code == ExitCode.OK
    assert _invoke("check", str(path), "--max-stall-rate", "0.1").exit_code == ExitCode.FAILED


def test_replay_of_a_real_trace_is_0_and_of_a_missing_file_2(tmp_path: Path):
    assert _invoke("replay", str(TRACE)).exit_code == ExitCode.OK
    missing = _invoke("replay", str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == ExitCode.USAGE and "nope.jsonl" in missing.stderr


def test_the_convention_is_in_pyguard_help():
    out = _invoke("--help")
    assert out.exit_code == ExitCode.OK
    assert "Exit status" in out.output and "130 interrupted" in " ".join(out.output.split())


def test_an_unknown_command_is_a_usage_error():
    assert _invoke("no-such-command").exit_code == ExitCode.USAGE
