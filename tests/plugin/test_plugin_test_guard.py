"""pyguard_guard's wrapper around a Guard: default task type from the marker, every RunResult recorded.
Checked with a stand-in Guard (the real one runs in the JVM tests)."""

from __future__ import annotations

import pytest
from plugin_runs import make_result

from pyguard.pytest_plugin.artifacts import RunCollector
from pyguard.pytest_plugin.guarding import TestGuard


class FakeRun:
    def __init__(self, task_type):
        self.task_type = task_type
        self.result = None


class FakeRunContext:
    def __init__(self, run, swallow):
        self.run, self.swallow = run, swallow

    def __enter__(self):
        return self.run

    def __exit__(self, *exc):
        self.run.result = make_result(
            [[("t", "{}")], "ok"], task_type=self.run.task_type, run_id=f"r-{self.run.task_type}"
        )
        return self.swallow


class FakeGuard:
    config = "the-policy"

    def __init__(self, swallow=False):
        self.swallow = swallow
        self.closed = False

    def start_run(self, task=None, task_type=None):
        return FakeRunContext(FakeRun(task_type), self.swallow)

    def run_scenario(self, scenario, task_type=None, **options):
        return make_result(["done"], task_type=task_type, run_id=f"s-{scenario}")

    def close(self):
        self.closed = True

    def something_else(self):
        return 42


def test_runs_get_the_marker_task_type_and_are_recorded():
    collector = RunCollector()
    guard = TestGuard(FakeGuard(), collector, task_type="lookup")
    with guard.start_run(task="where is 12345?") as run:
        assert run.task_type == "lookup"
    with guard.start_run(task="x", task_type="triage"):
        pass
    scenario = guard.run_scenario("incident")
    assert [r.run_id for r in guard.results] == ["r-lookup", "r-triage", "s-incident"]
    assert guard.results[-1] is scenario and scenario.task_type == "lookup"
    assert (guard.policy, guard.something_else()) == ("the-policy", 42)
    guard.close()
    assert guard.guard.closed


def test_a_run_that_raised_is_still_recorded():
    collector = RunCollector()
    guard = TestGuard(FakeGuard(swallow=False), collector, task_type=None)
    with pytest.raises(ZeroDivisionError):
        with guard.start_run(task="x"):
            _ = 1 / 0
    assert len(collector) == 1


class OptionsGuard(FakeGuard):
    """Settles the agent options as Guard.run does (pyguard.base.agent_options), and hands back the task type it got."""

    def run(self, style, model, task, *, options=None, **keywords):
        from pyguard.base.agent_options import agent_options

        settled = agent_options("Guard.run", options, keywords)
        return make_result(["done"], task_type=settled.task_type, run_id=f"run-{settled.task_type}")


def test_the_marker_task_type_goes_to_runs_that_name_none_in_keywords_or_options():
    from pyguard.base.agent_options import AgentOptions

    guard = TestGuard(OptionsGuard(), RunCollector(), task_type="lookup")
    assert guard.run("executor", None, "x").task_type == "lookup"
    assert guard.run("executor", None, "x", task_type=None).task_type == "lookup"
    assert guard.run("executor", None, "x", task_type="triage").task_type == "triage"
    assert guard.run("executor", None, "x", options=AgentOptions(task_type="triage")).task_type == "triage"
    assert guard.run("executor", None, "x", options=AgentOptions(run_id="r")).task_type == "lookup"
    assert len(guard.results) == 5
