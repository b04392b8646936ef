"""The policy a test's guard runs with, and the per-test guard that records what it produced.

The policy is built in layers, each laid over the one before:

1. ``PolicyConfig()`` defaults, or the session's ``--pyguard-policy`` / ``pyguard_policy`` TOML file, or else the
   nearest ``pyguard.toml`` / ``[tool.pyguard]`` (see :mod:`pyguard.pytest_plugin.settings`);
2. the marker's ``policy``: a TOML file replaces the layer below, a dict is merged into it key by key;
3. the marker's ``max_iterations``: the hard cap on model calls (``caps.max_model_calls``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyguard.pytest_plugin.marker import MarkerArgs, marker_args
from pyguard.pytest_plugin.settings import PluginSettings

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine import PolicyConfig

__all__: list[str] = []


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` laid over ``base``: nested dicts merge key by key, any other value replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def build_policy(settings: PluginSettings, args: MarkerArgs) -> PolicyConfig:
    """The test's policy from the session settings and the test's marker (see the module docstring)."""
    # lazy: the plugin loads in every pytest session; the engine (numpy) only for a test that uses it
    from pyguard.engine import PolicyConfig

    config = PolicyConfig.from_file(args.policy_file if args.policy_file is not None else settings.policy)
    overlay: dict[str, Any] = dict(args.policy_fields or {})
    if args.max_iterations is not None:
        overlay = deep_merge(overlay, {"caps": {"max_model_calls": args.max_iterations}})
    if overlay:
        config = PolicyConfig.model_validate(deep_merge(config.model_dump(), overlay))
    return config


class TestGuard:
    """The ``pyguard_guard`` fixture: a ``pyguard.live.guard.Guard`` for one test.

    It runs with the test's policy (:func:`build_policy`), gives runs the marker's ``task_type`` unless they name
    their own, and records every ``RunResult`` it produces in the test's ``pyguard_runs``. Everything else is the
    Guard's own API (``.guard`` is the Guard itself).
    """

    __test__ = False  # not a test class, whatever pytest's collection thinks of the name

    def __init__(self, guard: Any, collector: Any, task_type: str | None) -> None:
        self.guard = guard
        self.task_type = task_type
        self._collector = collector
        self._attached: list[Any] = []

    @property
    def results(self) -> list[Any]:
        """The RunResults this guard produced so far, in order."""
        return self._collector.results

    @property
    def policy(self) -> Any:
        return self.guard.config

    def start_run(self, task: str | None = None, task_type: str | None = None, **options: Any) -> _RecordingRun:
        """``with pyguard_guard.start_run(task=...) as run:`` -- as ``Guard.start_run``; the result is recorded."""
        ctx = self.guard.start_run(task=task, task_type=task_type or self.task_type, **options)
        return _RecordingRun(ctx, self._collector)

    def run_scenario(self, scenario: Any, *args: Any, **options: Any) -> Any:
        """As ``Guard.run_scenario``; the result is recorded."""
        result = self.guard.run_scenario(scenario, *args, **self._typed(options))
        self._collector.add(result)
        return result

    def run(self, style: Any, model: Any, task: str, **options: Any) -> Any:
        """As ``Guard.run`` (a pyguard-built agent around ``model``); the result is recorded."""
        result = self.guard.run(style, model, task, **self._typed(options))
        self._collector.add(result)
        return result

    def attach(self, model: Any, **options: Any) -> Any:
        """As ``Guard.attach``: a guard for an agent's lifetime (build the agent once around ``.model``); every run
        it guards is recorded, and the runs still open when the test ends are ended then."""
        agent_guard = self.guard.attach(model, on_result=self._collector.add, **self._typed(options))
        self._attached.append(agent_guard)
        return agent_guard

    def agent(self, style: Any, model: Any, **options: Any) -> Any:
        """As ``Guard.agent``: one of pyguard's agent styles built once; each ``chat()`` run is recorded."""
        agent = self.guard.agent(style, model, on_result=self._collector.add, **self._typed(options))
        self._attached.append(agent.agent_guard)
        return agent

    def _typed(self, options: dict[str, Any]) -> dict[str, Any]:
        """``options`` with the marker's task type when they name none (as ``task_type`` or in an ``AgentOptions``
        given as ``options``)."""
        agent_options = options.get("options")
        if options.get("task_type") is not None or getattr(agent_options, "task_type", None) is not None:
            return options
        return {**options, "task_type": self.task_type}

    def run_many(self, jobs: Any, **options: Any) -> list[Any]:
        """As ``Guard.run_many``; each job receives this test guard, so every result is recorded."""
        return self.guard.run_many([lambda _guard, job=job: job(self) for job in jobs], **options)

    def close(self) -> None:
        while self._attached:
            self._attached.pop().close()
        close = getattr(self.guard, "close", None)
        if callable(close):
            close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.guard, name)


class _RecordingRun:
    """Wraps the Guard's run context manager; on exit records ``run.result`` in the test's collector."""

    def __init__(self, ctx: Any, collector: Any) -> None:
        self._ctx = ctx
        self._collector = collector
        self._run: Any = None

    def __enter__(self) -> Any:
        self._run = self._ctx.__enter__()
        return self._run

    def __exit__(self, *exc: Any) -> Any:
        try:
            return self._ctx.__exit__(*exc)
        finally:
            try:
                result = self._run.result if self._run is not None else None
            except Exception:  # the run never finished: nothing to record
                result = None
            if result is not None:
                self._collector.add(result)


def make_test_guard(request: Any, collector: Any) -> TestGuard:
    """Build the test's guard from the session settings and the test's pyguard marker."""
    # lazy: the plugin loads in every pytest session; the guard (the engine, numpy) only for a test that uses it
    from pyguard.live.guard import Guard

    # lazy: settings() is defined in pyguard.pytest_plugin, which imports this module before defining it
    from pyguard.pytest_plugin import settings

    args = marker_args(request.node)
    guard = Guard(config=build_policy(settings(request.config), args), trace_dir=None)
    return TestGuard(guard, collector, args.task_type)
