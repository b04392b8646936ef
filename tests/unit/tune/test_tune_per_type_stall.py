"""Each task type may take its own screened stall setting (``[task_types.X.stall]``), ranked on the same passes."""

import numpy as np
import pytest
from test_tune_search import _with_successful_loops, probe_tables

from pyguard.engine import PolicyConfig
from pyguard.replay import replay_run
from pyguard.tune.search import Fitter
from pyguard.tune.simulate import RunSet
from pyguard.tune.space import Budget, SearchSpace, budget_of, build_policy


def _fit(bound: float, early: bool = False):
    # 3 successful loops, all of type "loopy": the starting stall rules stop them (3/100 > 2%); 4 reflections let
    # loopy meet the bound, which costs "plain" (no such runs) most of its savings if the setting is shared. The
    # lever is max_reflections, which counts when each call's results are judged with the next call
    # (judge_results_early = false); judged before it, a stall persisting after its one reflection stops whatever
    # max_reflections says, and no screened setting spares loopy
    runs = _with_successful_loops(3)
    base, n = PolicyConfig(judge_results_early=early), len(runs)
    everyone = np.arange(n)
    tables = probe_tables(runs, base)
    type_of = np.zeros(n, dtype=np.int64)
    type_of[1::2] = 1
    type_of[-3:] = 1
    space = SearchSpace.quick().model_copy(update={"max_reflections": (1, 4)})
    fitter = Fitter(RunSet(runs), type_of, ["plain", "loopy"], {"plain", "loopy"}, base, space, bound, False, tables)
    return fitter, fitter.fit(everyone), runs, type_of, tables


def test_a_type_keeps_its_own_stall_setting_where_the_shared_one_costs_it_savings():
    fitter, fit, runs, type_of, tables = _fit(0.02)
    assert fit.stall == {"max_reflections": 4}  # what loopy needs, best over both types together
    assert fit.type_stall == {"plain": {}} and fit.stall_of("loopy") == fit.stall
    plain, loopy = fit.types["plain"], fit.types["loopy"]
    assert plain.feasible and loopy.feasible and plain.counts.false_stops == 0
    shared_plain = fitter._fit_stall(fit.stall, np.arange(len(runs)))[1]["plain"]
    assert plain.counts.calls_saved > shared_plain.counts.calls_saved + 0.1
    # the policy written gives each type what its pass saw: replay_run agrees with the simulation on every run
    config = build_policy(fitter.base, fit.stall, fit.budgets, fit.type_stall)
    assert config.budget_for("plain").max_reflections == 1 and config.budget_for("loopy").max_reflections == 4
    for code, name in enumerate(["plain", "loopy"]):
        mask = type_of == code
        table = tables(fit.stall_of(name)).subset(mask)
        stops = table.stops(fit.types[name].budget)
        real = [
            replay_run(
                runs[i].model_copy(update={"start": runs[i].start.model_copy(update={"task_type": name})}), config
            ).stop_at
            or 0
            for i in table.runs
        ]
        assert list(stops) == real


@pytest.mark.parametrize("early", [True, False], ids=["results-judged-early", "results-judged-late"])
def test_a_tight_bound_leaves_no_type_its_own_setting(early):
    # ~100 successes per type cannot certify a choice made on them at 0.5% ((0 + 1) / 102 > 0.5%): one shared setting
    # loopy (3 loops in 100 successes) meets 0.5% under no screened setting: it falls back to reflect-only
    _, fit, *_ = _fit(0.005, early)
    assert {t for t, f in fit.types.items() if f.reflect_only} == {"loopy"}
    reflect_only = {"max_reflections": 150, "stop_on_fruitless_retry": False, "stop_on_repeated_evidence": False}
    assert fit.type_stall == {"loopy": reflect_only}


def test_build_policy_writes_a_whole_stall_table_and_the_reflections_of_a_type():
    b = Budget(base_budget=3, hard_cap=9, extension=1, earn_threshold=0.3, earn_per_iteration=2)
    base = PolicyConfig()
    shared = {"max_reflections": 4}
    config = build_policy(base, shared, {"a": b, "b": b}, {"a": {"low_gain_streak": 2}, "b": shared})
    assert config.max_reflections == 4 and config.stall == base.stall
    assert config.stall_for("a") == base.stall.model_copy(update={"low_gain_streak": 2})
    assert config.budget_for("a").max_reflections == 1 and config.budget_for("a").stop_on_fruitless_retry
    assert config.task_types["b"].stall is None and config.budget_for("b").max_reflections == 4
    assert budget_of(config, "a") == b
    assert PolicyConfig.model_validate(config.model_dump()) == config
    assert "[task_types.a.stall]" in config.to_toml()


def test_a_starting_policy_with_per_type_stall_tables_is_refused():
    import pytest

    from pyguard.base.errors import InputError
    from pyguard.engine.config import StallConfig, TaskTypeConfig
    from pyguard.tune import TuneOptions, tune

    base = PolicyConfig(task_types={"lookup": TaskTypeConfig(stall=StallConfig(low_gain_streak=2))})
    with pytest.raises(InputError, match=r"per task type \(lookup\).*remove \[task_types.X.stall\]"):
        tune(_with_successful_loops(0), TuneOptions(base=base))


def test_a_target_lowered_for_one_type_leaves_the_others_their_own_setting():
    fitter, _, runs, *_ = _fit(0.02)
    everyone = np.arange(len(runs))
    lowered = fitter.fit(everyone, target=0.0)  # lowered for every type: no screened setting certified
    assert {t: s for t, s in lowered.type_stall.items() if not lowered.types[t].reflect_only} == {}
    per_type = fitter.fit(everyone, target={"loopy": 0.0})  # lowered for loopy only: plain still at the bound
    assert per_type.stall_of("plain") == {}  # (loopy, which no setting keeps at 0, falls back to reflect-only)
    assert per_type.types["loopy"].reflect_only
