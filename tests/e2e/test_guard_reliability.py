"""Reliability of the Guard API: time bounds with a hung engine, cancel before wrap, trace file safety, partial usage.

A hung engine is an engine whose decision blocks on an Event the test sets only after ``guard.run`` returned: the
run returning at all proves the caller does not wait for the engine (no sleeps, no timing assumptions)."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from pyguard.base.errors import RunError
from pyguard.base.events import Outcome
from pyguard.jvm import scripted_model
from pyguard.live.guard import Guard
from pyguard.loading import load_runs
from pyguard.trace import read_trace, trace_file_name

TASK = "Where is order 12345?"


class _HangingSession:
    """A real engine session whose decision about iteration ``at`` blocks until ``release`` is set."""

    def __init__(self, inner, at: int, release: threading.Event, entered: threading.Event) -> None:
        self._inner, self._at, self._release, self._entered = inner, at, release, entered

    def observe(self, event):
        if event.index == self._at:
            self._entered.set()
            self._release.wait()
            from pyguard.base.decisions import Action, Decision

            self._inner.observe(event)
            # a late STOP must never be applied or recorded
            return Decision(
                action=Action.STOP, reason="late stop", rule="late", outcome=Outcome.STALLED, iteration=event.index
            )
        return self._inner.observe(event)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _EngineWaits:
    """The run's engine lock, noting how long each wait for it was allowed to last (None: the engine's own use)."""

    def __init__(self, waits: list) -> None:
        self._lock, self.waits = threading.Lock(), waits

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        self.waits.append(timeout)
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()

    def __enter__(self):
        self._lock.acquire()
        self.waits.append(None)
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()


def _hanging_guard(release, entered, *, waits: list | None = None, **kwargs) -> Guard:
    """A Guard whose engine hangs at model call 1: nothing comes before it, so whatever the machine's load the
    decision that misses the deadline is this one (the engine holds it until the test releases it)."""
    guard = Guard(**kwargs)
    real_new_run = guard.policy.new_run
    guard.policy.new_run = lambda run_id, task_type=None: _HangingSession(
        real_new_run(run_id, task_type), 1, release, entered
    )
    if waits is not None:
        real_start = guard.start_run

        def start_run(*args, **kw):
            run = real_start(*args, **kw)
            run._engine_lock = _EngineWaits(waits)
            return run

        guard.start_run = start_run
    return guard


def _no_callback_in_flight(sensor) -> None:
    """Wait until no guard callback of an earlier test is still returning (the count is the JVM's, across tests):
    polling a condition, with a bound that only stops a broken build from hanging."""
    for _ in range(60_000):
        if not sensor.callbacksInFlight():
            return
        threading.Event().wait(0.001)
    raise AssertionError(f"{sensor.callbacksInFlight()} guard callbacks still in flight")


def test_a_hung_engine_holds_the_run_one_deadline_then_it_ends_at_once_and_its_late_decision_is_discarded(
    jvm, tmp_path
):
    from jpype import JClass

    sensor = JClass("dev.pyguard.bridge.GuardSensor")
    _no_callback_in_flight(sensor)
    release, entered, waits = threading.Event(), threading.Event(), []
    guard = _hanging_guard(
        release, entered, waits=waits, callback_timeout_ms=200, trace_dir=tmp_path, fail_safe_calls=12
    )
    model = scripted_model("logistics_incident", seed=1)
    try:
        result = guard.run("aiservices", model, TASK)
        # guard.run came back while the engine still hangs: at most one callback thread is busy for this run
        decided = entered.is_set()  # the engine began the decision before the run ended (not so on a loaded machine)
        assert not release.is_set()
        assert sensor.callbacksInFlight() <= 1
    finally:
        release.set()
    assert result.outcome is Outcome.GUARD_ERROR, result.summary()
    # one deadline per run: after the missed deadline no later model call was made (the cap was 12) ...
    # (the model's one other call is the wrap-up of the stopped run: no tools, its answer from what it knows)
    assert model.calls() == 1 + (result.record.end.answer_source == "wrap_up"), result.summary()
    assert "model call 1 missed its deadline of 200 ms; the run is stopped at once" in result.reason, result.reason
    if decided:  # then Python knows whose decision was late, and says so too
        assert "missed the callback deadline of 200 ms and was discarded" in result.reason, result.reason
    # ... and ending the run did not wait for the hung engine again: every wait for it allowed no time at all
    assert [w for w in waits if w is not None and w != 0] == [], waits
    # the decision about iteration 1 came too late (if at all): it is in neither the result nor the trace
    assert result.decisions == ()
    [record] = load_runs(result.trace_path)
    assert record.end is not None and record.end.outcome is Outcome.GUARD_ERROR
    [run] = read_trace(result.trace_path).runs
    assert run.decisions == []


def test_after_the_hung_engine_returns_no_callback_thread_stays_busy(jvm):
    from jpype import JClass

    sensor = JClass("dev.pyguard.bridge.GuardSensor")
    release, entered = threading.Event(), threading.Event()
    _no_callback_in_flight(sensor)
    guard = _hanging_guard(release, entered, callback_timeout_ms=100, fail_safe_calls=8)
    runs, models = [], [scripted_model("logistics_incident", seed=1) for _ in range(3)]
    try:
        for i, model in enumerate(models):
            runs.append(guard.run("executor", model, TASK, run_id=f"hang{i}"))
        assert sensor.callbacksInFlight() <= 3  # one parked thread per hung run at most, not one per model call
    finally:
        release.set()
    # the late decisions return into a finished run and are dropped; then the pool threads are idle again
    for run, model in zip(runs, models, strict=True):
        assert run.outcome is Outcome.GUARD_ERROR
        assert model.calls() == 1 + (run.record.end.answer_source == "wrap_up")  # stopped at once after the miss
    _no_callback_in_flight(sensor)


def test_guard_has_a_default_callback_deadline():
    from pyguard.live.guard import DEFAULT_CALLBACK_TIMEOUT_MS

    assert Guard().callback_timeout_ms == DEFAULT_CALLBACK_TIMEOUT_MS > 0
    assert Guard(callback_timeout_ms=0).callback_timeout_ms == 0


def test_cancel_before_wrap_is_honoured(jvm):
    guard = Guard()
    with guard.start_run(task=TASK) as run:
        run.cancel("cancelled before the agent was built")
        model = run.wrap(scripted_model("logistics_incident", seed=1))
        run.call(lambda: str(model.chat(TASK)))
    assert run.result.outcome is Outcome.CANCELLED
    assert run.result.model_calls == 0


def test_colliding_and_reused_run_ids_never_overwrite_a_trace(jvm, tmp_path):
    guard = Guard(trace_dir=tmp_path)
    a = guard.run_scenario("convergent", "do the task", run_id="job/1", seed=1)
    b = guard.run_scenario("convergent", "do the task", run_id="job_1", seed=1)
    assert a.trace_path != b.trace_path
    assert {r.run_id for r in load_runs(tmp_path)} == {"job/1", "job_1"}
    with pytest.raises(RunError, match="never overwritten"):
        guard.run_scenario("convergent", "do the task", run_id="job_1", seed=1)
    assert {r.run_id for r in load_runs(tmp_path)} == {"job/1", "job_1"}
    long = guard.run_scenario("convergent", "do the task", run_id="x" * 300, seed=1)
    assert len(os.path.basename(long.trace_path)) <= 128
    assert stat.S_IMODE(os.stat(long.trace_path).st_mode) == 0o600


def test_a_symlink_where_the_trace_goes_is_refused_not_followed(jvm, tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / trace_file_name("r1")).symlink_to(target)
    with pytest.raises(RunError):
        Guard(trace_dir=traces).run_scenario("convergent", "do the task", run_id="r1", seed=1)
    assert target.read_text() == "keep me"


def test_trace_file_names_are_distinct_and_safe():
    ids = ["job/1", "job_1", "job 1", "../etc/passwd", "", ".hidden", "-rf", "é", "x" * 300, "x" * 301, "a#1"]
    names = [trace_file_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    for name in names:
        assert "/" not in name and not name.startswith((".", "-")) and len(name) <= 128 and name.endswith(".jsonl")
    assert trace_file_name("lookup#3") == "lookup#3.jsonl"


def test_a_task_that_starts_with_the_guard_marker_is_still_seen_by_the_guard(jvm):
    task = "[pyguard guard] Where is order 12345?"
    result = Guard().run_scenario("logistics_incident", task, seed=1)
    first = result.record.events[0]
    assert [o.text for o in first.observations if o.kind == "user"] == [task]


def test_the_guards_own_reflection_is_not_reported_as_an_observation(jvm):
    from pyguard.engine.reflection import HEADER
    from pyguard.jvm import load_scenario

    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}
    result = Guard().run_scenario(scenario, TASK, seed=3)
    assert result.reflections
    for event in result.record.events:
        assert not any(o.kind == "user" and o.text.startswith(HEADER) for o in event.observations)


def test_a_negative_usage_from_the_provider_is_unknown_and_the_total_partial(jvm):
    from pyguard.jvm import load_scenario

    scenario = dict(load_scenario("convergent"))
    turns = [dict(t) for t in scenario["turns"]]
    turns[1]["input_tokens"] = -105  # a provider reporting nonsense for call 2
    scenario["turns"] = turns
    result = Guard().run_scenario(scenario, "do the task", seed=1)
    assert result.outcome is Outcome.SUCCEEDED, result.summary()
    second = result.record.events[1]
    assert second.input_tokens is None  # a negative count is no count: unknown, never accepted as -105
    assert all(t is None or t >= 0 for e in result.record.events for t in (e.input_tokens, e.total_tokens))
    assert result.tokens_partial and result.end.tokens_partial


def test_concurrent_runs_with_colliding_ids_each_get_their_own_readable_trace(jvm, tmp_path):
    guard = Guard(trace_dir=tmp_path)
    ids = ["job/1", "job_1", "job 1", "job:1"]
    results = guard.run_many(
        [lambda g, i=i: g.run_scenario("convergent", "do the task", run_id=i, seed=1) for i in ids], threads=4
    )
    assert len({r.trace_path for r in results}) == 4
    assert sorted(r.run_id for r in load_runs(tmp_path)) == sorted(ids)


def test_ctrl_c_inside_a_callback_stops_the_run_instead_of_unwinding_through_java(jvm):
    from pyguard.jvm.callback import CallbackAdapter

    def interrupted(event):
        raise KeyboardInterrupt

    adapter = CallbackAdapter(interrupted)
    proxy = adapter.java()
    reply = proxy.onIteration('{"run_id": "r1", "index": 1}')
    assert '"cancelled"' in reply and adapter.interrupted


def test_runs_on_the_main_thread_leave_no_java_thread_behind(jvm):
    from jpype import JClass

    thread = JClass("java.lang.Thread")

    def java_threads() -> int:
        # the callback pool left out: it is a cached pool, which starts a thread when a callback comes before the last
        # one's thread is back in the pool (a loaded machine), and lets it end after a minute idle
        return sum(
            1 for t in thread.getAllStackTraces().keySet() if not str(t.getName()).startswith("pyguard-callback-")
        )

    guard = Guard()
    guard.run_scenario("convergent", "do the task", seed=1)  # warm
    before = java_threads()
    for _ in range(20):
        guard.run_scenario("convergent", "do the task", seed=1)
    assert java_threads() <= before + 2  # not one per run (each run's helper thread is detached)
