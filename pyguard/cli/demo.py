"""``pyguard demo``: the logistics incident on a real LangChain4j AiServices agent, unguarded and guarded.

The agent is LangChain4j's own AiServices loop with real @Tool methods (``LogisticsTools``); the model is pyguard's
scripted ``ChatModel`` replaying the incident (``get_shipment_status`` seven times with the same order id, then with
the id prefixed ``SO-``). No network, no API key.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from pyguard.errors import PyguardError
from pyguard.result import RunResult

__all__ = ["demo", "run_demo"]

SCENARIO = "logistics_incident"
TASK = "Where is order 12345? Tell me its shipment status."


def _side(result: RunResult) -> dict[str, Any]:
    return {
        "outcome": result.outcome.value,
        "reason": result.reason,
        "model_calls": result.model_calls,
        "tool_calls": result.tool_calls,
        "input_tokens": result.end.input_tokens,
        "output_tokens": result.end.output_tokens,
        "total_tokens": result.total_tokens,
        "reflections_after": result.reflections,
        "stop_rule": result.evidence.get("rule"),
        "answer": result.answer,
        "trace": result.trace_path,
    }


def run_demo(*, seed: int | None = None, over_http: bool = False, trace_dir: str | None = None) -> dict[str, Any]:
    """The demo's three runs (unguarded; guarded; guarded with an agent that ignores the reflection);
    returns the ``--json`` object."""
    from pyguard.guard import Guard, run_unguarded
    from pyguard.jvm import load_scenario, scripted_model, start_jvm, start_openai_server

    start_jvm()
    stubborn = dict(load_scenario(SCENARIO))
    stubborn["on_reflection"] = {**stubborn.get("on_reflection", {}), "recover_probability": 0.0}
    guard = Guard(trace_dir=trace_dir)
    if over_http:
        with start_openai_server(SCENARIO, seed=seed) as server:
            unguarded = run_unguarded("aiservices", server.chat_model(), TASK, tools=server)
        guarded = guard.run_scenario(SCENARIO, TASK, seed=seed, over_http=True)
        ignored = guard.run_scenario(stubborn, TASK, seed=seed, over_http=True)
    else:
        unguarded = run_unguarded("aiservices", scripted_model(SCENARIO, seed=seed), TASK, tools="logistics")
        guarded = guard.run("aiservices", scripted_model(SCENARIO, seed=seed), TASK, tools="logistics")
        ignored = guard.run("aiservices", scripted_model(stubborn, seed=seed), TASK, tools="logistics")
    out = {
        "scenario": SCENARIO,
        "agent": "LangChain4j AiServices with @Tool LogisticsTools, scripted ChatModel"
        + (" over HTTP (OpenAiChatModel -> local server)" if over_http else ""),
        "task": TASK,
        "seed": seed,
        "unguarded": _side(unguarded),
        "guarded": _side(guarded),
        "guarded_reflection_ignored": _side(ignored),
    }
    u, g = unguarded.total_tokens, guarded.total_tokens
    out["guarded_token_share"] = round(g / u, 4) if u and g is not None else None
    return out


def _table(out: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"pyguard demo: {out['scenario']}  ({out['agent']})", title_justify="left")
    table.add_column("")
    table.add_column("unguarded (LangChain4j defaults)")
    table.add_column("guarded (pyguard default policy)")
    table.add_column("guarded, the agent ignores the reflection")
    sides = [out["unguarded"], out["guarded"], out["guarded_reflection_ignored"]]
    rows = [
        ("outcome", "outcome"),
        ("model calls", "model_calls"),
        ("tool calls", "tool_calls"),
        ("total tokens", "total_tokens"),
        ("reflection after call", "reflections_after"),
        ("why it ended", "reason"),
        ("answer (salvaged if stopped)", "answer"),
    ]
    for name, key in rows:
        cells = []
        for side in sides:
            value = side[key]
            if isinstance(value, list):
                value = ", ".join(map(str, value))
            cells.append(str(value) if value not in (None, "") else "-")
        table.add_row(name, *cells)
    console.print(table)
    if out.get("guarded_token_share") is not None:
        console.print(f"The guarded run used {out['guarded_token_share']:.0%} of the unguarded run's tokens.")
    for side in sides[1:]:
        if side.get("trace"):
            console.print(f"Trace: {side['trace']}")


@click.command(name="demo")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
@click.option("--seed", type=int, default=None, help="Seed of the scripted model's stochastic turns (default: the scenario's).")
@click.option("--over-http", is_flag=True, help="Serve the model over the local OpenAI-compatible server (OpenAiChatModel).")
@click.option("--trace-dir", type=click.Path(file_okay=False), default=None, help="Write the guarded run's JSONL trace here.")
def demo(as_json: bool, seed: int | None, over_http: bool, trace_dir: str | None) -> None:
    """Run the logistics incident unguarded and guarded, side by side (no network, no key)."""
    try:
        out = run_demo(seed=seed, over_http=over_http, trace_dir=trace_dir)
    except PyguardError as exc:
        click.echo(f"pyguard demo: {exc}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(out, indent=2))
    else:
        _table(out)
