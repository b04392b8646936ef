"""tune(): recovers a known best policy, cross-validates by task, checks its input."""

import numpy as np
import pytest

from pyguard.base.errors import InputError
from pyguard.base.events import Outcome, RunEnd, RunRecord
from pyguard.engine import PolicyConfig
from pyguard.testing.synthetic import generate
from pyguard.tune import TuneOptions, task_folds, tune
from pyguard.tune.space import budget_of
from pyguard.tune.synthetic import KNOWN_LONGEST, known_best_cap, known_best_runs


def test_folds_keep_each_task_whole_and_follow_the_seed():
    groups = [f"task{i // 3}" for i in range(60)]
    strata = ["a" if i < 30 else "b" for i in range(60)]
    folds = task_folds(groups, strata, 5, seed=1)
    for g in set(groups):
        assert len({int(folds[i]) for i, x in enumerate(groups) if x == g}) == 1
    assert sorted(set(folds.tolist())) == [0, 1, 2, 3, 4]
    assert (task_folds(groups, strata, 5, seed=1) == folds).all()
    assert not (task_folds(groups, strata, 5, seed=2) == folds).all()
    for s in ("a", "b"):  # each type spread over the folds
        assert len({int(f) for f, x in zip(folds, strata, strict=False) if x == s}) == 5


def test_tune_finds_the_known_best_caps(tiny_space):
    records = known_best_runs(150, seed=3)
    # bound 0.05: 30 successes per type (24 per training fold) are enough to certify a fitted budget at 5%, not
    # at 1% (99 needed: search.min_successes_to_fit); the best caps stop no successful run, so held out 0 either way
    result = tune(records, TuneOptions(space=tiny_space, max_false_stop_rate=0.05, bootstrap=100))
    tuned = PolicyConfig.model_validate(result.policy)
    caps = tiny_space.values("hard_cap", 40)
    for t in KNOWN_LONGEST:
        assert budget_of(tuned, t).hard_cap == known_best_cap(t, caps)
    assert result.verification_mismatches == 0 and result.verified_runs == 150
    h = result.held_out
    assert h is not None and h.false_stop_rate.value <= 0.01
    assert h.failed_tool_calls_saved.value > result.default.failed_tool_calls_saved.value
    assert h.failed_tool_calls_saved.low <= h.failed_tool_calls_saved.value <= h.failed_tool_calls_saved.high
    assert result.in_sample.failed_tool_calls_saved.value >= h.failed_tool_calls_saved.value - 1e-9
    assert len(result.fold_stall) == 5 and result.points


def test_tune_is_deterministic(tiny_space):
    records = known_best_runs(60, seed=5)
    a = tune(records, TuneOptions(space=tiny_space, seed=4, bootstrap=100, min_runs=5)).to_dict()
    b = tune(records, TuneOptions(space=tiny_space, seed=4, bootstrap=100, min_runs=5)).to_dict()
    a.pop("elapsed_s"), b.pop("elapsed_s")
    assert a == b


def _relabel(records, fn):
    out = []
    for r in records:
        label = fn(r)
        out.append(
            r.model_copy(
                update={"end": r.end.model_copy(update={"success_label": label, "outcome": Outcome.SUCCEEDED})}
            )
        )
    return out


def test_no_labels_is_an_input_error():
    records = _relabel(known_best_runs(20, seed=1), lambda r: None)
    records = [
        r.model_copy(update={"end": r.end.model_copy(update={"evidence": {"imported_from": "x"}})}) for r in records
    ]
    with pytest.raises(InputError, match="no.*outcome label|none of the 20 runs"):
        tune(records)


def test_a_type_with_no_successes_keeps_the_starting_budget_and_says_so(tiny_space):
    # nothing of it can be stopped falsely, so every policy meets the bound on it: tune answers, leaving it untuned
    records = _relabel(known_best_runs(60, seed=1), lambda r: r.task_type != "ops" and r.end.success_label)
    result = tune(records, TuneOptions(space=tiny_space, min_runs=5, bootstrap=100))
    ops = next(t for t in result.types if t.task_type == "ops")
    assert not ops.tuned and ops.successful == 0 and "no successful one" in (ops.note or "")
    assert ops.budget == budget_of(PolicyConfig(), "ops").model_dump()
    assert any("task type 'ops'" in w and "no successful one" in w for w in result.warnings)


def test_an_impossible_bound_answers_reflect_only(tiny_space):
    # successful runs that loop: the stall rules stop them whatever the budget and the reflection settings
    loops = [
        RunRecord(
            start={"run_id": f"r{i}", "task_type": "x", "task": f"t{i}"},
            events=[e.model_copy(update={"run_id": f"r{i}"}) for e in generate("exact_repeat", i).events],
            end=RunEnd(run_id=f"r{i}", outcome=Outcome.SUCCEEDED, success_label=i % 2 == 0),
        )
        for i in range(30)
    ]
    # no stall setting keeps them running: the type falls back to reflect-only, which meets even a zero bound here
    result = tune(loops, TuneOptions(space=tiny_space, max_false_stop_rate=0.0))
    (t,) = result.types
    assert t.reflect_only and t.held_out is not None and t.held_out.false_stop_rate.value == 0.0


def test_small_types_keep_the_starting_budget_with_a_warning(tiny_space):
    records = known_best_runs(90, seed=2)
    result = tune(records, TuneOptions(space=tiny_space, min_runs=31, bootstrap=100))
    kept = [t for t in result.types if not t.tuned]
    assert kept and all("too few runs" in (t.note or "") for t in kept)
    assert any("too few runs" in w for w in result.warnings)
    start = budget_of(PolicyConfig(), None).model_dump()
    assert all(t.budget == start and t.held_out is None for t in kept)


def test_unlabelled_runs_are_skipped_and_counted(tiny_space):
    records = known_best_runs(60, seed=2)
    records = _relabel(records[:6], lambda r: None) + records[6:]
    result = tune(records, TuneOptions(space=tiny_space, min_runs=5, bootstrap=100))
    # a run labelled None with a SUCCEEDED outcome and no import mark counts as a live trace's success
    assert result.labelled_runs + result.skipped_unlabelled == 60
    assert np.isfinite(result.elapsed_s)


def test_the_starting_policy_is_kept_when_the_tuned_one_saves_no_more(tiny_space):
    # a space holding only the start's own values: the tuned policy can only equal it, so it saves no more
    start = PolicyConfig()
    only = {
        k: (getattr(start, k),)
        for k in ("base_budget", "hard_cap", "extension", "earn_threshold", "earn_per_iteration")
    }
    result = tune(
        known_best_runs(60, seed=8), TuneOptions(space=tiny_space.model_copy(update=only), bootstrap=100, min_runs=5)
    )
    assert result.kept_start
    kept = PolicyConfig.model_validate(result.policy)
    assert kept.stall == start.stall and kept.max_reflections == start.max_reflections
    assert all(budget_of(kept, t) == budget_of(start, t) for t in KNOWN_LONGEST)
    assert result.held_out.failed_tool_calls_saved.value == result.default.failed_tool_calls_saved.value
    assert any("kept the starting policy" in w for w in result.warnings)


def test_fitted_budgets_need_order_statistics_headroom():
    from pyguard.tune.search import certified, min_successes_to_fit

    # a new success outlasts the longest of n with chance 1/(n+1): 99 successes certify 1%, 98 do not
    assert min_successes_to_fit(0.01) == 99 and certified(0, 99, 0.01) and not certified(0, 98, 0.01)
    assert min_successes_to_fit(0.05) == 19 and min_successes_to_fit(0.0) is None
    assert certified(1, 199, 0.01) and not certified(2, 199, 0.01)  # (f+1)/(n+1), not f/n


def test_types_with_too_few_successes_keep_the_starting_budget_numbers(tiny_space):
    # ~30 successes per type: at a 1% bound no fitted budget can be certified, so the budgets stay the start's
    records = known_best_runs(150, seed=3)
    result = tune(records, TuneOptions(space=tiny_space, max_false_stop_rate=0.01, bootstrap=100))
    start = budget_of(PolicyConfig(), None).model_dump()
    for t in result.types:
        assert t.tuned and not t.budget_fitted and t.budget == start
        assert t.held_out is not None and "1/(n+1)" in (t.note or "")
    assert sum("1/(n+1)" in w for w in result.warnings) == 3


def test_a_stall_made_false_stop_does_not_rule_out_every_budget(tiny_space):
    # one type, >= 99 successes, one of them a loop that the stall rules stop whatever the budget: 1/n plainly within
    # 1%, but no fitted budget certifies (1+1)/(n+1) <= 1%; the starting budget (not fitted) is kept, no error
    runs = [r for r in known_best_runs(600, seed=0) if r.task_type == "lookup"]
    loop = generate("exact_repeat", 0)
    runs.append(
        RunRecord(
            start={"run_id": "loop", "task_type": "lookup", "task": "loop task"},
            events=[e.model_copy(update={"run_id": "loop"}) for e in loop.events],
            end=RunEnd(run_id="loop", outcome=Outcome.SUCCEEDED, success_label=True),
        )
    )
    result = tune(runs, TuneOptions(space=tiny_space, max_false_stop_rate=0.01, bootstrap=100))
    (t,) = result.types
    assert t.successful >= 100 and t.in_sample.false_stops == 1
    assert t.tuned and not t.budget_fitted and t.budget == budget_of(PolicyConfig(), None).model_dump()
