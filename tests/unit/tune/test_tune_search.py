"""The search never ends below an admissible starting policy; tune says when the starting policy breaks the bound."""

import numpy as np
import pytest

from pyguard.base.events import Outcome, RunEnd, RunRecord
from pyguard.engine import PolicyConfig
from pyguard.testing.synthetic import generate
from pyguard.tune import TuneOptions, tune
from pyguard.tune.probe import probe_config, probe_run
from pyguard.tune.search import Fitter
from pyguard.tune.simulate import ProbeTable, RunSet
from pyguard.tune.space import budget_of, stall_key
from pyguard.tune.synthetic import tune_runs


def _with_successful_loops(n_loops: int) -> list[RunRecord]:
    """~200 successful lookup runs (and failed loops) plus ``n_loops`` successful runs that repeat one call: the
    starting policy's stall rules stop those, so it stops n_loops successful runs whatever the budget."""
    runs = tune_runs(300, seed=1, types=("lookup",))
    for i in range(n_loops):
        loop = generate("exact_repeat", 100 + i)
        runs.append(
            RunRecord(
                start={"run_id": f"loop{i}", "task_type": "lookup", "task": f"loop task {i}"},
                events=[e.model_copy(update={"run_id": f"loop{i}"}) for e in loop.events],
                end=RunEnd(run_id=f"loop{i}", outcome=Outcome.SUCCEEDED, success_label=True),
            )
        )
    return runs


def probe_tables(runs: list[RunRecord], base: PolicyConfig):
    """The probe table of all ``runs`` under a stall setting, computed once per setting (what the tuner caches)."""
    everyone = np.arange(len(runs))
    cache: dict[tuple, ProbeTable] = {}

    def tables(stall):
        key = stall_key(stall)
        if key not in cache:
            cache[key] = ProbeTable(everyone, [probe_run(r, probe_config(base, stall)) for r in runs])
        return cache[key]

    return tables


def _fitter(runs: list[RunRecord], space, bound: float) -> tuple[Fitter, np.ndarray]:
    base, n = PolicyConfig(), len(runs)
    tables = probe_tables(runs, base)
    return Fitter(
        RunSet(runs), np.zeros(n, dtype=np.int64), ["lookup"], {"lookup"}, base, space, bound, False, tables
    ), np.arange(n)


def test_a_lowered_target_does_not_end_below_an_admissible_start(tiny_space):
    # the start stops 2 of 200 successful runs (1%), within a 2% bound. Aiming the fit at 0.5% (what the tuner does
    # when fitted policies exceeded the bound held out) made the start infeasible in the fit, and the search ended
    # on 4 reflections: 1 false stop, but a third of the start's savings. The start is judged against the bound.
    fitter, everyone = _fitter(_with_successful_loops(2), tiny_space, bound=0.02)
    at_bound = fitter.fit(everyone)
    lowered = fitter.fit(everyone, target=0.005)
    start = fitter.fit(everyone, target=0.02)
    assert start.stall == {} and start.types["lookup"].budget == budget_of(PolicyConfig(), "lookup")
    c = lowered.types["lookup"].counts
    assert c.false_stops == 2 and c.successes == 200  # the start's own rate, 1% <= 2%
    assert lowered.types["lookup"].feasible
    assert lowered.score >= at_bound.score - 1e-12 >= 0.9  # nothing saved less than the start
    assert lowered.stall == {}


def test_a_changed_stall_setting_still_meets_the_lowered_target(tiny_space):
    # the exemption is for the starting policy only: under a changed stall setting (chosen on these runs) the
    # starting budget numbers must meet the target, so a fit at a target the start breaks cannot pick 4 reflections
    # with the start's 2 false stops
    fitter, everyone = _fitter(_with_successful_loops(2), tiny_space, bound=0.02)
    fitter.target = 0.005
    rank, types = fitter._fit_stall({"max_reflections": 4}, everyone)
    f = types["lookup"]
    assert f.feasible == (f.counts.false_stops <= 0.005 * f.counts.successes)
    rank, types = fitter._fit_stall({}, everyone)
    assert types["lookup"].feasible and types["lookup"].counts.false_stops == 2  # the start, at the bound


@pytest.fixture(scope="module")
def breaking_result():
    # the start stops 2 of 200 successful runs (1%): above a 0.5% bound, so its savings are no like-for-like baseline
    from tests.unit.tune.conftest import TINY

    return tune(_with_successful_loops(2), TuneOptions(space=TINY, max_false_stop_rate=0.005, bootstrap=100))


def test_tune_says_when_the_starting_policy_breaks_the_bound(breaking_result):
    r = breaking_result
    (t,) = r.types
    assert not t.default_meets_bound and not r.default_meets_bound
    assert t.default.false_stops == 2 and t.default.successful_runs == 200
    assert any("breaks the bound" in w and "like-for-like" in w and "'lookup'" in w for w in r.warnings)
    assert r.to_dict()["types"][0]["default_meets_bound"] is False
    assert not r.kept_start  # a start that breaks the bound is never kept as the "no worse" policy


def test_the_cli_table_and_the_policy_file_mark_a_starting_policy_that_breaks_the_bound(breaking_result):
    from rich.console import Console

    from pyguard.cli.tune import tune_table
    from pyguard.tune.output import policy_toml

    console = Console(record=True, width=200)
    tune_table(breaking_result, console)
    text = console.export_text()
    assert "starting policy (breaks the bound: not like-for-like)" in text
    assert "breaks the bound on these runs itself" in text  # the warning, with the default's rate
    assert "not a like-for-like baseline" in policy_toml(breaking_result, "runs.jsonl", "2026-11-30")
