"""What guarding costs per model call: the same scripted run unguarded and guarded, in one process.

``python benchmarks/run.py overhead [--quick] [--json]`` (needs the bridge jars: ``mvn -q -f java/pom.xml package``).

A generated scenario makes ``CALLS`` model calls per run (``CALLS - 1`` tool calls, then an answer) on a real
LangChain4j AiServices agent (and pyguard's explicit executor) with the in-process scripted model. Modes:

- ``unguarded``: the raw scripted model, no wrapper at all;
- ``observe_only``: GuardedChatModel + sensor (the event JSON is built in Java), no callback;
- ``java_callback``: the full Java path with a Java callback answering continue (no Python);
- ``guarded``: the Python callback (JPype proxy, ``IterationEvent.model_validate_json``, a policy returning continue,
  the decision JSON back) on the calling thread;
- ``guarded_deadline``: the same with a callback deadline (the callback runs on a Java pool thread).

``bridge_*``: the Java -> Python crossing alone (``BridgeProbe``): a raw proxy returning a constant, and the
CallbackAdapter (parse + policy + reply), on the calling thread and through a pool thread. Each figure is the best
(lowest) over repetitions of the mean time per model call (or per event), as timeit reports; modes are interleaved
within each repetition, and ``styles_median`` gives the medians too.
"""

from __future__ import annotations

import statistics
import time

STYLES = ("aiservices", "executor")


def _scenario(calls: int) -> dict:
    return {
        "name": "overhead",
        "seed": 0,
        "tools": [
            {
                "name": "lookup",
                "description": "Look something up",
                "parameters": {"q": "string"},
                "results": ["result {call}: some text the model reads, about a line long, as a tool would return"],
            }
        ],
        "turns": [
            {"tool_calls": [{"name": "lookup", "arguments": {"q": "query {turn}"}}], "repeat": calls - 1},
            {"answer": "done"},
        ],
    }


def _time_runs(make_agent, runs: int) -> float:
    """Seconds for ``runs`` runs, each with a fresh agent (built outside the timing)."""
    agents = [make_agent(i) for i in range(runs)]
    t0 = time.perf_counter()
    for agent in agents:
        result = agent.run("benchmark task")
        if not result.answered():
            raise RuntimeError(f"benchmark run did not answer: {result.toJson()}")
    return time.perf_counter() - t0


def run(quick: bool) -> dict:
    if quick:
        return measure(runs=20, reps=5, warmup=5, probe_n=2_000)
    return measure(runs=50, reps=15, warmup=20, probe_n=20_000)


def measure(*, runs: int, reps: int, warmup: int, probe_n: int) -> dict:
    """The whole measurement at the given sizes (``run`` picks them; tests use tiny ones)."""
    from jpype import JImplements, JOverride

    from pyguard.jvm import build_agent, guard_model, scripted_model, start_jvm
    from pyguard.jvm._java import jclass
    from pyguard.jvm.callback import CallbackAdapter

    start_jvm()
    calls = 20
    model = scripted_model(_scenario(calls))
    GuardConfig = jclass("dev.pyguard.bridge.GuardConfig")
    Guarded = jclass("dev.pyguard.bridge.GuardedChatModel")
    Probe = jclass("dev.pyguard.bridge.BridgeProbe")

    def policy(event):
        return None

    modes = {
        "unguarded": lambda style: lambda i: build_agent(style, model, max_loop_iterations=100),
        "observe_only": lambda style: (
            lambda i: build_agent(
                style, guard_model(model, None, run_id=f"o{i}", observe_only=True), max_loop_iterations=100
            )
        ),
        "java_callback": lambda style: (
            lambda i: build_agent(
                style,
                Guarded(model, GuardConfig.of(f"j{i}").withMaxModelCalls(1000), Probe.javaContinue()),
                max_loop_iterations=100,
            )
        ),
        "guarded": lambda style: (
            lambda i: build_agent(
                style, guard_model(model, policy, run_id=f"g{i}", keep_events=False), max_loop_iterations=100
            )
        ),
        "guarded_deadline": lambda style: (
            lambda i: build_agent(
                style,
                guard_model(model, policy, run_id=f"d{i}", callback_timeout_ms=5000, keep_events=False),
                max_loop_iterations=100,
            )
        ),
    }
    # warm up every path (JIT, class loading, pydantic)
    for style in STYLES:
        for make in modes.values():
            _time_runs(make(style), warmup)

    # interleave modes within each repetition, so drifting machine load hits every mode alike
    samples: dict[tuple[str, str], list[float]] = {(st, m): [] for st in STYLES for m in modes}
    for _ in range(reps):
        for style in STYLES:
            for name, make in modes.items():
                samples[(style, name)].append(_time_runs(make(style), runs) / (runs * calls) * 1e6)
    # best of the repetitions (as timeit does: the least disturbed figure), medians alongside
    per_style = {st: {m: round(min(samples[(st, m)]), 2) for m in modes} for st in STYLES}
    per_style_median = {st: {m: round(statistics.median(samples[(st, m)]), 2) for m in modes} for st in STYLES}

    # the crossing alone
    probe_model = guard_model(model, policy, run_id="probe")
    build_agent("executor", probe_model, max_loop_iterations=100).run("x")
    event_json = probe_model.callback.events[1].model_dump_json()  # a typical event: one tool call, one observation

    @JImplements("dev.pyguard.bridge.GuardCallback")
    class RawProxy:
        @JOverride
        def onIteration(self, eventJson):  # noqa: N802,N803
            return '{"action":"continue"}'

    raw = RawProxy()
    adapter = CallbackAdapter(policy, keep_events=False).java()
    bridge = {}
    for name, cb in (("raw", raw), ("adapter", adapter)):
        Probe.deliver(cb, event_json, probe_n // 10)
        bridge[f"bridge_us_per_event_{name}"] = round(
            min(int(Probe.deliver(cb, event_json, probe_n)) / probe_n / 1e3 for _ in range(reps)), 2
        )
        Probe.deliverWithDeadline(cb, event_json, probe_n // 10, 5000)
        bridge[f"bridge_us_per_event_{name}_pool_thread"] = round(
            min(int(Probe.deliverWithDeadline(cb, event_json, probe_n, 5000)) / probe_n / 1e3 for _ in range(reps)), 2
        )

    main = per_style["aiservices"]
    return {
        "scenario": {"calls_per_run": calls, "runs_per_rep": runs, "reps": reps, "event_json_bytes": len(event_json)},
        "per_call_us_unguarded": main["unguarded"],
        "per_call_us_guarded": main["guarded"],
        "ratio": round(main["guarded"] / main["unguarded"], 2),
        "overhead_us_per_call": round(main["guarded"] - main["unguarded"], 2),
        "per_call_us_guarded_deadline": main["guarded_deadline"],
        "per_call_us_observe_only": main["observe_only"],
        "per_call_us_java_callback": main["java_callback"],
        "styles": per_style,
        "styles_median": per_style_median,
        **bridge,
    }


def render(result: dict, console) -> None:
    from rich.table import Table

    t = Table(title=f"pyguard overhead per model call (µs), {result['scenario']['calls_per_run']} calls per run")
    t.add_column("mode")
    for style in result["styles"]:
        t.add_column(style, justify="right")
    for mode in next(iter(result["styles"].values())):
        t.add_row(mode, *(f"{result['styles'][s][mode]:.1f}" for s in result["styles"]))
    console.print(t)
    console.print(
        f"guarded/unguarded (aiservices): [bold]{result['ratio']}x[/], +{result['overhead_us_per_call']} µs per call"
    )
    b = Table(title="Java -> Python crossing alone (µs per event)")
    b.add_column("callback")
    b.add_column("calling thread", justify="right")
    b.add_column("pool thread (deadline mode)", justify="right")
    for name in ("raw", "adapter"):
        b.add_row(
            name, str(result[f"bridge_us_per_event_{name}"]), str(result[f"bridge_us_per_event_{name}_pool_thread"])
        )
    console.print(b)
