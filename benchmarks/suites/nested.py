"""A supervisor looping over a stuck sub-agent: unguarded against guarded as a run tree. Model calls and tokens.

``python benchmarks/run.py nested [--quick] [--json]`` (needs the bridge jars: ``make setup``).

The system is LangChain4j's own ``AgenticServices.supervisorBuilder()`` over two ``agentBuilder`` sub-agents, all on
pyguard's scripted models (shipped scenarios ``nested_planner_stuck``, ``nested_notifier``, ``nested_tracker_stuck``):
the planner asks the notifier once, then invokes the tracker with the same request again and again; the tracker
checks the same shipment status 6 times (the same result) before answering that it is still unknown.

- **unguarded**: the same system, every model call observed, nothing acted on; LangChain4j's own limits only
  (``maxAgentsInvocations``, ``maxToolCallingRoundTrips`` 20);
- **guarded**: ``pyguard.live.nested.run_nested`` with the default policy: each invocation a child run, the supervisor's
  invocations its tool calls; no tree limits, so what stops the loop is the detection one level up;
- **guarded + tree budget**: the same with ``TreeLimits(model_calls=12)`` on the whole tree, fewer calls than the
  detection needs here: the tree's budget holds across the supervisor and every sub-agent invocation.

For each: model calls and tokens of the whole tree, the root's outcome, how many sub-agent invocations ran.
"""

from __future__ import annotations

TASK = "Where is order 12345? Tell the customer."
LIMITS = {True: (10,), False: (10, 20, 40)}
"""LangChain4j's maxAgentsInvocations of the supervisor, per mode (quick: one)."""
TREE_BUDGET = 12
"""Model calls of the whole tree in the third variant."""


def _agents():
    from pyguard.jvm import scripted_model
    from pyguard.live.nested import SubAgent

    return [
        SubAgent("notifier", scripted_model("nested_notifier"), description="Sends messages to the customer"),
        SubAgent("tracker", scripted_model("nested_tracker_stuck"), description="Finds where an order is"),
    ]


def _one(max_invocations: int) -> dict:
    from pyguard.engine.tree import TreeLimits
    from pyguard.jvm import scripted_model
    from pyguard.live.guard import Guard
    from pyguard.live.nested import run_nested, run_nested_unguarded

    planner = "nested_planner_stuck"
    unguarded = run_nested_unguarded(
        "supervisor", TASK, _agents(), planner=scripted_model(planner), max_agents_invocations=max_invocations
    )
    guarded = run_nested(
        Guard(), "supervisor", TASK, _agents(), planner=scripted_model(planner), max_agents_invocations=max_invocations
    )
    budget = TREE_BUDGET
    capped = run_nested(
        Guard(),
        "supervisor",
        TASK,
        _agents(),
        planner=scripted_model(planner),
        max_agents_invocations=max_invocations,
        limits=TreeLimits(model_calls=budget),
    )

    def row(result) -> dict:
        return {
            "model_calls": result.tree_model_calls,
            "tokens": result.tree_total_tokens,
            "outcome": str(result.outcome),
            "invocations": len(result.children),
            "planner_calls": result.model_calls,
            "reason": result.reason,
        }

    return {
        "max_agents_invocations": max_invocations,
        "unguarded": {
            "model_calls": unguarded.model_calls,
            "tokens": unguarded.total_tokens,
            "outcome": "failed" if unguarded.error else "answered",
            "error": unguarded.error,
        },
        "guarded": row(guarded),
        "tree_budget": {"model_calls_limit": budget, **row(capped)},
    }


def run(quick: bool = False) -> dict:
    from pyguard.jvm import start_jvm

    start_jvm()
    rows = [_one(n) for n in LIMITS[quick]]
    return {
        "command": "python benchmarks/run.py nested" + (" --quick" if quick else ""),
        "task": TASK,
        "rows": rows,
    }


def render(result: dict, console) -> None:
    from rich.table import Table

    table = Table(title=f"supervisor over a stuck sub-agent ({result['date']})")
    for col in ("maxAgentsInvocations", "variant", "model calls", "tokens", "outcome", "invocations"):
        table.add_column(col)
    for r in result["rows"]:
        n = str(r["max_agents_invocations"])
        u = r["unguarded"]
        table.add_row(n, "unguarded", str(u["model_calls"]), str(u["tokens"]), u["outcome"], "-")
        for name in ("guarded", "tree_budget"):
            g = r[name]
            label = name if name == "guarded" else f"tree budget ({g['model_calls_limit']} calls)"
            table.add_row(n, label, str(g["model_calls"]), str(g["tokens"]), g["outcome"], str(g["invocations"]))
    console.print(table)
