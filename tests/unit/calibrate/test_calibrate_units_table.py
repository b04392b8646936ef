"""Costs in the units given (calls, tokens, money, with decimals; mixed units refused) and a table that fits
(issue 37, points 2 and 7)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from rich.console import Console

from pyguard.base.errors import InputError
from pyguard.calibrate import RunArrays, RunStatus, calibrate_arrays, make_config
from pyguard.calibrate.report import report_json, report_table
from pyguard.calibrate.table import table_cells
from pyguard.calibrate.units import format_cost
from pyguard.cli import main


def _arrays(with_tokens: bool, names: tuple[str, ...] = ("lookup",), runs: int = 120) -> RunArrays:
    rng = np.random.default_rng(3)
    m = runs * len(names)
    n = rng.integers(1, 16, m)
    status = rng.choice([RunStatus.SUCCESS, RunStatus.FAILURE, RunStatus.CENSORED], m, p=[0.6, 0.3, 0.1])
    tokens = np.tile(300.0 * np.arange(1, 16), (m, 1)) if with_tokens else np.full((m, 15), np.nan)
    return RunArrays.from_columns(n, status, tokens, task_types=names, type_code=np.repeat(np.arange(len(names)), runs))


def _render(report, width: int) -> str:  # noqa: ANN001
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False)
    console.print(report_table(report, console.width))
    return buf.getvalue()


@pytest.mark.parametrize(
    ("kwargs", "with_tokens", "unit", "words"),
    [
        ({"failure_cost": 20.0, "cost_per_call": 1.0}, False, "calls", "model calls"),
        ({"failure_cost": 20000.0}, True, "tokens", "tokens"),
        ({"failure_cost": 2.0, "price_per_1k_tokens": 0.01}, True, "currency", "currency at 0.01 per 1k tokens"),
        ({"failure_cost": 2.0, "cost_per_call": 0.05}, False, "currency", "the unit of --cost-per-call (0.05"),
    ],
)
def test_every_cost_is_in_the_unit_given(kwargs: dict, with_tokens: bool, unit: str, words: str) -> None:
    report = calibrate_arrays(_arrays(with_tokens), make_config(bootstrap=50, **kwargs))
    assert report.cost_unit == unit
    assert json.loads(report_json(report))["cost_unit"] == unit
    text = _render(report, 200)
    assert f"costs in {words}" in " ".join(text.split())  # the title wraps at the table's width
    if not with_tokens:  # costed per call: no word of tokens anywhere
        assert "token" not in text
    (t,) = report.task_types
    shown = format_cost(t.expected_cost_at_optimum, unit)
    assert shown in text
    if unit != "tokens" and t.expected_cost_at_optimum < 1000:  # decimals kept, never rounded to a whole number
        assert float(shown) == pytest.approx(t.expected_cost_at_optimum, rel=1e-3)


def test_costs_keep_their_decimals() -> None:
    # two caps that save 0.31 and 0.41 per run are two figures, not both "0" or "2"
    assert (format_cost(0.31, "currency"), format_cost(0.41, "currency"), format_cost(1.6905, "calls")) == (
        "0.31",
        "0.41",
        "1.69",
    )
    assert format_cost(2.0, "currency") == "2" and format_cost(12345.6, "tokens") == "12,346"


def test_mixed_units_without_a_price_are_refused_naming_both() -> None:
    tok = _arrays(True, ("with_usage",))
    calls = _arrays(False, ("no_usage",))
    both = RunArrays(
        task_types=("with_usage", "no_usage"),
        type_code=np.concatenate([tok.type_code, calls.type_code + 1]),
        iterations=np.concatenate([tok.iterations, calls.iterations]),
        status=np.concatenate([tok.status, calls.status]),
        token_run=tok.token_run,
        token_iter=tok.token_iter,
        token_value=tok.token_value,
    )
    with pytest.raises(InputError, match=r"mix units: task types 'with_usage' .*'no_usage' report none"):
        calibrate_arrays(both, make_config(failure_cost=2.0, cost_per_call=0.05, bootstrap=50))
    priced = calibrate_arrays(both, make_config(failure_cost=2.0, cost_per_call=0.05, price_per_1k_tokens=0.01))
    assert priced.cost_unit == "currency"


@pytest.mark.parametrize("width", [80, 60])
def test_the_table_shows_every_figure_whole(width: int) -> None:
    names = ("web_shopping_checkout_flow", "order_lookup", "refund")
    report = calibrate_arrays(_arrays(True, names, runs=400), make_config(failure_cost=123456.0, bootstrap=50))
    text = _render(report, width)
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    for t in report.task_types:
        for cell in table_cells(t, report):
            assert any(cell in line for line in lines), f"{cell!r} is not whole at {width} columns:\n{text}"


def test_the_cli_table_fits_a_pipe_of_80_columns(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    runs = []
    for i in range(300):
        n = int(rng.integers(1, 30))
        messages = [{"role": "user", "content": "go"}]
        for k in range(n):
            last = k == n - 1
            msg: dict = {"role": "assistant", "content": "done" if last else None}
            if not last:
                msg["tool_calls"] = [{"id": f"c{k}", "type": "function", "function": {"name": "t", "arguments": "{}"}}]
            messages.append(msg)
            if not last:
                messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": "x"})
        runs.append({"id": f"r{i}", "task_type": "a_long_task_type_name", "messages": messages, "success": i % 3 > 0})
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in runs))
    res = CliRunner().invoke(
        main,
        ["calibrate", str(path), "--failure-cost", "40", "--cost-per-call", "1", "--bootstrap", "50"],
        env={"COLUMNS": "80"},
    )
    assert res.exit_code == 0, res.output
    body = res.stdout
    assert "ok/fail/cut" in body and "200/100/0" in body and "token" not in body
