"""tune always answers: a task type that no stall setting keeps within the bound falls back to reflect-only (its
stalls reflect, its hard cap alone stops it), and says so per type; the other types are tuned as before."""

import json

import pytest
from click.testing import CliRunner

from pyguard.base.events import Outcome, RunEnd, RunRecord
from pyguard.cli import main
from pyguard.engine import PolicyConfig
from pyguard.replay import replay_run
from pyguard.testing.synthetic import generate
from pyguard.trace import write_runs
from pyguard.tune import TuneOptions, policy_toml, tune, write_policy
from pyguard.tune.space import budget_of, build_policy, reflect_only
from pyguard.tune.synthetic import known_best_runs


def _loops(n: int, task_type: str | None = "loopy") -> list[RunRecord]:
    """``n`` runs that repeat one call over and over, half of them labelled successful: every stall setting of the
    space stops them, so no setting keeps this type's false-stop rate near a bound of a few percent."""
    return [
        RunRecord(
            start={"run_id": f"l{i}", "task_type": task_type, "task": f"loop {i}"},
            events=[e.model_copy(update={"run_id": f"l{i}"}) for e in generate("exact_repeat", i).events],
            end=RunEnd(run_id=f"l{i}", outcome=Outcome.SUCCEEDED, success_label=i % 2 == 0),
        )
        for i in range(n)
    ]


def _mixed() -> list[RunRecord]:
    return [r for r in known_best_runs(120, seed=3) if r.task_type == "lookup"] + _loops(40)


@pytest.mark.parametrize(
    ("early", "lowest"),
    # judged before the next call, a stall that persists after its reflection stops however many reflections are
    # left, so no screened setting spares a successful loop (1); judged with the next call, 4 reflections spare a few
    [(True, "the lowest is 1)"), (False, "the lowest is 0.85")],
    ids=["results-judged-early", "results-judged-late"],
)
def test_a_type_no_stall_setting_fits_becomes_reflect_only_and_the_others_are_tuned(
    tiny_space, tmp_path, early, lowest
):
    # before: InputError "no policy in the search space keeps the false-stop rate of task type 'loopy' within 0.02"
    base = PolicyConfig(judge_results_early=early)
    options = TuneOptions(space=tiny_space, max_false_stop_rate=0.02, bootstrap=100, min_runs=5, base=base)
    result = tune(_mixed(), options)
    types = {t.task_type: t for t in result.types}
    loopy, lookup = types["loopy"], types["lookup"]
    assert loopy.reflect_only and not lookup.reflect_only
    assert "no stall setting" in (loopy.note or "") and lowest in (loopy.note or "")
    assert any("'loopy'" in w and "reflect-only" in w for w in result.warnings)
    assert loopy.default.false_stop_rate.value == 1.0  # the starting policy stops every successful loop
    assert loopy.held_out is not None and loopy.held_out.false_stop_rate.value == 0.0
    assert lookup.held_out is not None and lookup.held_out.false_stop_rate.value <= 0.02
    policy = PolicyConfig.model_validate(result.policy)
    cap = budget_of(PolicyConfig(), "loopy").hard_cap
    settings = policy.budget_for("loopy")
    assert (settings.base_budget, settings.hard_cap, settings.max_reflections) == (cap, cap, cap)
    assert settings.stop_on_fruitless_retry is False and settings.stop_on_repeated_evidence is False
    assert policy.judge_results_early is early
    assert policy.budget_for("lookup").max_reflections == PolicyConfig().max_reflections
    assert result.verification_mismatches == 0  # the written policy replays as the search simulated it
    loops = [r for r in _mixed() if r.task_type == "loopy"]
    assert all(replay_run(r, policy).stop_at is None for r in loops)  # runs shorter than the cap: never stopped
    assert result.to_dict()["types"][[t.task_type for t in result.types].index("loopy")]["reflect_only"] is True
    assert "#     loopy is reflect-only: no stall setting" in policy_toml(result, "runs.jsonl", "2026-12-01")
    written = write_policy(result, tmp_path / "tuned.toml", "runs.jsonl", "2026-12-01")
    assert PolicyConfig.from_toml(written) == policy


def test_runs_without_a_task_type_fall_back_at_the_top_level(tiny_space):
    result = tune(_loops(40, None), TuneOptions(space=tiny_space, max_false_stop_rate=0.02, bootstrap=100, min_runs=5))
    (t,) = result.types
    assert t.task_type is None and t.reflect_only and t.held_out.false_stop_rate.value == 0.0
    policy = PolicyConfig.model_validate(result.policy)
    assert policy.max_reflections == policy.hard_cap == policy.base_budget and not policy.stop_on_fruitless_retry
    assert result.verification_mismatches == 0


def test_an_impossible_bound_still_answers_with_the_most_lenient_policy_and_says_so(tiny_space):
    # successful runs longer than every hard cap of the space: even reflect-only stops them, at any bound below 1
    long_runs = [r for r in known_best_runs(200, seed=4) if not r.end.success_label and r.task_type == "research"]
    relabelled = [
        r.model_copy(update={"end": r.end.model_copy(update={"success_label": i % 2 == 0})})
        for i, r in enumerate(long_runs)
    ]
    space = tiny_space.model_copy(update={"hard_cap": (6, 8, 12, 25)})
    start = PolicyConfig(hard_cap=25, base_budget=8)
    result = tune(relabelled, TuneOptions(space=space, base=start, max_false_stop_rate=0.0, bootstrap=100, min_runs=5))
    (t,) = result.types
    assert t.reflect_only and t.budget["hard_cap"] == 25
    assert any(
        "even reflect-only" in w and "no policy in the search space meets the bound" in w for w in result.warnings
    )


def test_build_policy_puts_the_untyped_runs_own_settings_at_the_top_and_keeps_the_shared_ones_for_named_types():
    base = PolicyConfig()
    b = budget_of(base, None)
    policy = build_policy(
        base,
        {"low_gain_streak": 3},
        {None: b.model_copy(update={"base_budget": 150}), "x": b},
        {None: reflect_only(150)},
    )
    assert policy.max_reflections == 150 and policy.stop_on_fruitless_retry is False and policy.base_budget == 150
    assert policy.stall.low_gain_streak == base.stall.low_gain_streak
    x = policy.task_types["x"]
    assert x.stall is not None and x.stall.low_gain_streak == 3
    assert x.max_reflections == base.max_reflections and x.stop_on_fruitless_retry is True


def test_the_cli_summary_says_which_type_is_reflect_only(tmp_path):
    write_runs(tmp_path / "mixed.jsonl", _mixed())

    def invoke(*extra: str):
        args = [str(tmp_path / "mixed.jsonl"), "--quick", "--workers", "1", "--max-false-stop-rate", "0.02"]
        res = CliRunner().invoke(main, ["tune", *args, "--min-runs", "5", *extra], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        return res.output

    summary = " ".join(invoke().split())
    assert "loopy is reflect-only (stopped by its hard cap alone)" in summary
    data = json.loads(invoke("--json"))
    assert {t["task_type"]: t["reflect_only"] for t in data["types"]} == {"lookup": False, "loopy": True}
