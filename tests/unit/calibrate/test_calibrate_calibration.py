"""calibrate_arrays / calibrate_runs: bad input, determinism, JSON without NaN, several task types, outputs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pyguard.base.errors import InputError
from pyguard.base.events import UNTYPED
from pyguard.calibrate import RunArrays, RunStatus, calibrate_arrays, calibrate_runs, make_config
from pyguard.calibrate.report import report_json, write_report
from pyguard.calibrate.snippet import java_identifier, java_snippet, properties_snippet, toml_snippet
from pyguard.calibrate.synthetic import SyntheticType, sample_runs, to_records
from pyguard.engine.config import PolicyConfig

CONFIG = make_config(failure_cost=1.0, price_per_1k_tokens=0.01, bootstrap=50)


def _two_types(runs: int = 120) -> RunArrays:
    a = sample_runs(SyntheticType(name="lookup"), runs, np.random.default_rng(1))
    b = sample_runs(SyntheticType(name="triage", median_calls=7, cancel_share=0.2), runs, np.random.default_rng(2))
    tokens = np.full((2 * runs, 25), np.nan)
    for i, arr in enumerate((a, b)):
        tokens[arr.token_run + i * runs, arr.token_iter - 1] = arr.token_value
    return RunArrays.from_columns(
        np.concatenate([a.iterations, b.iterations]),
        np.concatenate([a.status, b.status]),
        tokens,
        task_types=("triage", "lookup"),
        type_code=np.repeat([1, 0], runs),
    )


def test_several_types_sorted_by_name_with_finite_json() -> None:
    report = calibrate_arrays(_two_types(), CONFIG)
    assert [t.task_type for t in report.task_types] == ["lookup", "triage"]
    data = json.loads(report_json(report))
    for t in data["task_types"]:
        for key in (
            "task_type",
            "runs",
            "successes",
            "c",
            "recommended_max_iterations",
            "ci_low",
            "ci_high",
            "expected_cost",
        ):
            assert key in t
        assert len(t["c"]) == len(t["expected_cost"]) == t["horizon"]
        assert t["ci_low"] <= t["recommended_max_iterations"] <= t["ci_high"]
        assert t["policy"]["base_budget"] <= t["policy"]["hard_cap"]
        assert all(math.isfinite(v) for k in ("c", "c_low", "c_high", "w", "expected_cost") for v in t[k])
        n_star = t["recommended_max_iterations"]
        assert t["expected_cost"][n_star - 1] == min(t["expected_cost"])


def test_same_seed_same_report_other_seed_same_point_estimate() -> None:
    arr = _two_types()
    one, two = calibrate_arrays(arr, CONFIG), calibrate_arrays(arr, CONFIG)
    assert one == two
    other = calibrate_arrays(arr, CONFIG.model_copy(update={"seed": 99}))
    assert [t.recommended_max_iterations for t in other.task_types] == [
        t.recommended_max_iterations for t in one.task_types
    ]
    assert [t.c_low for t in other.task_types] != [t.c_low for t in one.task_types]


def test_records_and_arrays_agree() -> None:
    arr = sample_runs(SyntheticType(name="lookup", cancel_share=0.2), 80, np.random.default_rng(5))
    from_records = calibrate_runs(iter(to_records(arr)), CONFIG)
    from_arrays = calibrate_arrays(arr, CONFIG)
    assert from_records.task_types[0].c == pytest.approx(from_arrays.task_types[0].c)
    assert from_records.task_types[0].recommended_max_iterations == from_arrays.task_types[0].recommended_max_iterations


def _arrays(iterations: list[int], status: list[int], with_tokens: bool = True, name: str = "lookup") -> RunArrays:
    tokens = np.full((len(iterations), max(iterations)), 500.0 if with_tokens else np.nan)
    return RunArrays.from_columns(np.array(iterations), np.array(status), tokens, task_types=(name,))


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        (_arrays([3], [RunStatus.SUCCESS]), r"'lookup' has 1 run\(s\).*at least 2"),
        (
            _arrays([3, 4], [RunStatus.SUCCESS, RunStatus.FAILURE], with_tokens=False),
            r"'lookup': none of its 2 runs has token counts",
        ),
    ],
)
def test_bad_task_types_are_named(arrays: RunArrays, message: str) -> None:
    with pytest.raises(InputError, match=message):
        calibrate_arrays(arrays, CONFIG)


def test_a_type_without_successes_gets_no_cap_and_the_others_are_still_calibrated() -> None:
    arr = _two_types()
    status = arr.status.copy()
    status[arr.type_code == 1] = RunStatus.FAILURE  # 'lookup' never succeeds
    bad = RunArrays(
        arr.task_types, arr.type_code, arr.iterations, status, arr.token_run, arr.token_iter, arr.token_value
    )
    report = calibrate_arrays(bad, CONFIG)
    by = {t.task_type: t for t in report.task_types}
    assert by["lookup"].recommended_max_iterations is None and by["lookup"].policy is None
    assert "no cap pays off" in by["lookup"].no_cap and "c(n) = 0 at every n" in by["lookup"].no_cap
    assert by["triage"].recommended_max_iterations is not None


def test_a_bad_type_is_skipped_with_its_reason_while_the_others_are_calibrated() -> None:
    good = _two_types()
    tiny = _arrays([3], [RunStatus.SUCCESS], name="rare")
    arr = RunArrays(
        task_types=good.task_types + ("rare",),
        type_code=np.concatenate([good.type_code, [2]]),
        iterations=np.concatenate([good.iterations, tiny.iterations]),
        status=np.concatenate([good.status, tiny.status]),
        token_run=np.concatenate([good.token_run, tiny.token_run + good.runs]),
        token_iter=np.concatenate([good.token_iter, tiny.token_iter]),
        token_value=np.concatenate([good.token_value, tiny.token_value]),
    )
    report = calibrate_arrays(arr, CONFIG)
    assert [s.task_type for s in report.skipped] == ["rare"]
    assert "at least 2" in report.skipped[0].reason
    assert {t.task_type for t in report.task_types} == {"lookup", "triage"}


def test_no_runs() -> None:
    with pytest.raises(InputError, match="no runs"):
        calibrate_arrays(RunArrays.from_columns(np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 1))), CONFIG)


@pytest.mark.parametrize("value", [-1.0, 0.0, float("nan"), float("inf")])
def test_bad_failure_cost(value: float) -> None:
    with pytest.raises(InputError, match=r"failure cost must be a positive finite number.*--failure-cost"):
        make_config(failure_cost=value)


def test_bad_price_and_bootstrap() -> None:
    with pytest.raises(InputError, match="price per 1k tokens"):
        make_config(failure_cost=1.0, price_per_1k_tokens=-0.5)
    with pytest.raises(InputError, match="bootstrap"):
        make_config(failure_cost=1.0, bootstrap=3)


def test_runs_missing_some_token_counts_are_costed_and_warned() -> None:
    arr = sample_runs(SyntheticType(), 100, np.random.default_rng(3))
    keep = arr.token_run >= 10  # the first 10 runs lose all their token counts
    arr = RunArrays(
        arr.task_types,
        arr.type_code,
        arr.iterations,
        arr.status,
        arr.token_run[keep],
        arr.token_iter[keep],
        arr.token_value[keep],
    )
    report = calibrate_arrays(arr, CONFIG)
    assert any("10 of 100 runs have no token counts" in w for w in report.warnings)


def test_optimum_at_the_edge_of_the_data_is_flagged() -> None:
    # Runs keep succeeding right up to the recording cap: the optimum may lie beyond it.
    spec = SyntheticType(
        median_calls=12,
        spread=0.3,
        solvable=1.0,
        failure_hazard=0.0,
        record_cap=10,
        base_tokens=100,
        growth_tokens=0,
        token_noise=0,
    )
    report = calibrate_arrays(
        sample_runs(spec, 200, np.random.default_rng(0)),
        make_config(failure_cost=10.0, price_per_1k_tokens=0.01, bootstrap=50),
    )
    t = report.task_types[0]
    assert t.recommended_max_iterations == 10 and t.at_horizon
    assert any("beyond the data" in w for w in report.warnings)


def test_snippets_load_where_they_go(tmp_path) -> None:  # noqa: ANN001
    report = calibrate_arrays(_two_types(), CONFIG)
    (tmp_path / "pyproject.toml").write_text(toml_snippet(report))
    policy = PolicyConfig.from_toml(tmp_path / "pyproject.toml")
    for t in report.task_types:
        budget = policy.budget_for(t.task_type)
        assert (budget.base_budget, budget.hard_cap) == (t.policy.base_budget, t.policy.hard_cap)
    assert policy.caps.max_total_tokens == max(t.policy.max_total_tokens for t in report.task_types)
    java = java_snippet(report)
    # LangChain4j makes R + 1 model calls under maxToolCallingRoundTrips(R) (tests/jvm_calibrate): N* calls are N* - 1
    assert f"LOOKUP_MAX_TOOL_CALLING_ROUND_TRIPS = {report.task_types[0].recommended_max_iterations - 1};" in java
    props = dict(
        line.split("=", 1) for line in properties_snippet(report).splitlines() if line and not line.startswith("#")
    )
    assert props["pyguard.calibrate.triage.maxIterations"] == str(report.task_types[1].recommended_max_iterations)
    assert props["pyguard.calibrate.triage.maxToolCallingRoundTrips"] == str(
        max(report.task_types[1].recommended_max_iterations - 1, 1)
    )
    assert java_identifier("2nd order-lookup") == "T_2ND_ORDER_LOOKUP"


def test_write_report(tmp_path) -> None:  # noqa: ANN001
    report = calibrate_arrays(_two_types(), CONFIG)
    written = write_report(report, tmp_path / "out")
    names = {p.relative_to(tmp_path / "out").as_posix() for p in written}
    assert {
        "report.md",
        "calibration.json",
        "CalibratedLimits.java",
        "calibration.properties",
        "pyguard.toml",
        "plots/c_lookup.png",
        "plots/cost_lookup.png",
        "plots/c_triage.png",
        "plots/cost_triage.png",
    } == names
    for p in written:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "out" / "report.md").read_text()
    assert "![c(n) for lookup](plots/c_lookup.png)" in md and "maxToolCallingRoundTrips" in md
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        write_report(report, tmp_path / "file")


def test_write_report_never_follows_a_symlink_and_names_a_plots_file(tmp_path) -> None:  # noqa: ANN001
    report = calibrate_arrays(_two_types(), CONFIG)
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "precious"
    target.write_text("keep me")
    (out / "report.md").symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        write_report(report, out)
    assert target.read_text() == "keep me"
    other = tmp_path / "other"
    other.mkdir()
    (other / "plots").write_text("not a folder")
    with pytest.raises(InputError, match="plots.*is a file"):
        write_report(report, other)


def test_runs_without_a_task_type_get_the_policys_own_budget_from_the_snippet(tmp_path) -> None:  # noqa: ANN001
    # runs without a task type form one group, named as summaries and reports name it; the TOML snippet gives its
    # budget to the policy itself (what a run without a task type gets), not to a task type no run carries
    records = to_records(sample_runs(SyntheticType(), 200, np.random.default_rng(3)))
    assert all(r.task_type is None for r in records)
    report = calibrate_runs(records, CONFIG)
    (t,) = report.task_types
    assert t.task_type == UNTYPED == "(untyped)"
    (tmp_path / "pyproject.toml").write_text(toml_snippet(report))
    policy = PolicyConfig.from_toml(tmp_path / "pyproject.toml")
    assert policy.task_types == {}
    budget = policy.budget_for(None)
    assert (budget.base_budget, budget.hard_cap) == (t.policy.base_budget, t.policy.hard_cap)
    assert "pyguard.calibrate.untyped.maxIterations=" in properties_snippet(report)
