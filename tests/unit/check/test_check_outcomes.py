"""Where outcomes come from: footers for pyguard traces, a (here: fake) policy replay for recordings."""

from pathlib import Path

import pytest

from pyguard.base.errors import InputError
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.check import check_runs, facts_from_footer, needs_replay, replay_outcomes, resolve_runs
from pyguard.check.outcomes import run_tokens
from pyguard.replay import finished_end


def _recording(rid, k, label=True, censored=False, task_type="lookup"):
    calls = (ToolCall(name="lookup", arguments="{}"),)
    events = [
        IterationEvent(
            run_id=rid,
            index=i + 1,
            input_tokens=100,
            output_tokens=10,
            tool_calls=calls if (i < k - 1 or censored) else (),
        )
        for i in range(k)
    ]
    outcome = Outcome.EXPIRED if censored else (Outcome.SUCCEEDED if label is not False else Outcome.FAILED)
    end = RunEnd(
        run_id=rid,
        outcome=outcome,
        iterations=k,
        success_label=label,
        censored=censored,
        evidence={"imported_from": "openai"},
    )
    return RunRecord(start=RunStart(run_id=rid, task_type=task_type), events=events, end=end)


def stop_after(limit, outcome=Outcome.STALLED):
    """A fake policy: stops any run longer than ``limit`` calls after call ``limit``; others finish, their end settled
    as replay settles a finished recording (:func:`pyguard.replay.finished_end`)."""

    def replay(runs):
        out = []
        for r in runs:
            if len(r.events) > limit:
                out.append(RunEnd(run_id=r.run_id, outcome=outcome, iterations=limit))
            else:
                out.append(finished_end(r))
        return out

    return replay


def test_footer_facts(make_runs):
    run = make_runs(1, seed=0)[0]
    f = facts_from_footer(run)
    assert (f.outcome, f.iterations, f.tokens, f.replayed) == (
        run.end.outcome,
        run.end.iterations,
        run.end.total_tokens,
        False,
    )


def test_tokens_fall_back_to_the_events(make_runs):
    run = make_runs(1, seed=0, with_events=True)[0]
    assert run.end.total_tokens is None
    assert run_tokens(run) == sum(e.total_tokens for e in run.events)
    rec = _recording("r", 4)
    assert run_tokens(rec) == 440 and run_tokens(rec, 2) == 220
    bare = RunRecord(
        start=RunStart(run_id="x"),
        events=[IterationEvent(run_id="x", index=1)],
        end=RunEnd(run_id="x", outcome=Outcome.SUCCEEDED, iterations=1),
    )
    assert run_tokens(bare) is None


def test_a_pyguard_run_without_footer_is_bad_input():
    run = RunRecord(start=RunStart(run_id="torn", agent_style="executor"), events=[])
    with pytest.raises(InputError, match="'torn' has no run_end footer"):
        resolve_runs([run], "pyguard")


def test_no_runs_is_bad_input():
    with pytest.raises(InputError, match="no runs"):
        resolve_runs([], "pyguard")


def test_reserved_task_type_is_refused():
    run = _recording("r", 2, task_type="*")
    with pytest.raises(InputError, match="reserves"):
        facts_from_footer(run)


def test_which_runs_need_a_replay(make_runs):
    trace_run = make_runs(1, seed=0)[0]
    rec = _recording("r", 3)
    unlabeled = _recording("u", 3, label=None)
    assert needs_replay(rec, "openai") and needs_replay(trace_run, "openai")
    assert not needs_replay(rec, "pyguard")
    assert needs_replay(rec, None) and needs_replay(unlabeled, None) and not needs_replay(trace_run, None)


def test_recordings_get_their_outcome_from_the_replay():
    runs = [
        _recording("short", 3),
        _recording("long", 9),
        _recording("bad", 2, label=False),
        _recording("cut", 5, label=None, censored=True),
    ]
    facts = replay_outcomes(runs, stop_after(6))
    by = {f.run_id: f for f in facts}
    assert by["short"].outcome is Outcome.SUCCEEDED and by["short"].iterations == 3
    assert by["long"].outcome is Outcome.STALLED and by["long"].iterations == 6
    assert by["long"].tokens == 6 * 110  # only the calls the policy would have let happen
    assert by["bad"].outcome is Outcome.FAILED  # the policy let it finish; the recording says it failed
    assert by["cut"].outcome is Outcome.EXPIRED  # cut off by the recorded agent's own cap
    assert all(f.replayed for f in facts)


def test_the_replayer_is_built_only_when_needed(make_runs):
    built = []

    def factory():
        built.append(1)
        return stop_after(6)

    resolve_runs(make_runs(5, seed=0), "pyguard", factory)
    assert built == []
    report = check_runs([_recording("long", 9)], fmt="openai", make_replayer=factory)
    assert built == [1] and report.summary.replayed == 1
    assert report.summary.overall.count(Outcome.STALLED) == 1


def test_recordings_without_a_replayer_are_bad_input():
    with pytest.raises(InputError, match="1 run\\(s\\) \\(first: 'r'\\) carry no guard outcome"):
        resolve_runs([_recording("r", 3)], "openai")


def test_a_replay_that_loses_runs_is_reported():
    with pytest.raises(InputError, match="returned 0 outcomes for 1 runs"):
        replay_outcomes([_recording("r", 3)], lambda runs: [])


RECORDINGS = Path(__file__).parents[2] / "data" / "recordings"


def test_the_real_replay_agrees_with_replay_runs():
    from pyguard.check import policy_replayer
    from pyguard.loading import load_runs
    from pyguard.replay import replay_runs

    runs = load_runs(RECORDINGS / "openai_runs.jsonl")
    facts = resolve_runs(runs, None, lambda: policy_replayer(None))
    assert all(f.replayed for f in facts)
    for run, f, r in zip(runs, facts, replay_runs(runs).runs, strict=False):
        if r.stop_at is not None:
            assert (f.outcome, f.iterations) == (r.outcome, r.stop_at)
        else:
            assert (f.outcome, f.iterations) == (run.end.outcome, len(run.events))


def test_a_stop_in_the_replay_becomes_the_runs_outcome(tmp_path):
    from pyguard.check import policy_replayer

    config = tmp_path / "pyguard.toml"
    config.write_text("[caps]\nmax_model_calls = 4\n")
    (f,) = resolve_runs([_recording("long", 9)], "openai", lambda: policy_replayer(config))
    assert (f.outcome, f.iterations, f.tokens) == (Outcome.EXPIRED, 4, 440)


def test_a_finished_recording_ends_as_it_says():
    # the policy lets each run finish: replay settles its end from the recording, check only reads it
    def end(rec, **update):
        return RunRecord(start=rec.start, events=rec.events, end=rec.end.model_copy(update=update))

    labelled_failed = end(_recording("f", 3, label=True), success_label=False)  # footer succeeded, label failed
    cut = end(_recording("c", 3, label=None), censored=True)  # footer succeeded, cut off by its own cap, no label
    finished = end(_recording("s", 3, censored=True), success_label=True)  # labelled successful: its final tool call
    stalled = end(_recording("t", 3, label=None), outcome=Outcome.STALLED)  # a stop the footer's writer settled
    torn = RunRecord(start=RunStart(run_id="n"), events=_recording("n", 2).events)
    got = [finished_end(r).outcome for r in (labelled_failed, cut, finished, stalled, torn)]
    assert got == [Outcome.FAILED, Outcome.EXPIRED, Outcome.SUCCEEDED, Outcome.STALLED, Outcome.SUCCEEDED]
    assert finished_end(cut).reason == "the recorded agent was cut off by its own cap"
    assert [finished_end(r).iterations for r in (cut, torn)] == [3, 2]


def test_a_stop_before_any_usage_leaves_the_tokens_unknown(tmp_path):
    # the calls the policy lets happen reported no usage, later ones did: unknown (None), never 0
    from pyguard.check import policy_replayer

    rec = _recording("late", 9)
    rec = RunRecord(
        start=rec.start,
        events=[e.model_copy(update={"input_tokens": None, "output_tokens": None}) for e in rec.events[:5]]
        + rec.events[5:],
        end=rec.end,
    )
    config = tmp_path / "pyguard.toml"
    config.write_text("[caps]\nmax_model_calls = 4\n")
    (f,) = resolve_runs([rec], "openai", lambda: policy_replayer(config))
    assert (f.outcome, f.iterations, f.tokens) == (Outcome.EXPIRED, 4, None)
