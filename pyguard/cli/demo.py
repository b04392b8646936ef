"""``pyguard demo``: the logistics incident on a real LangChain4j AiServices agent, unguarded and guarded.

The agent is LangChain4j's own AiServices loop with real @Tool methods (``LogisticsTools``); the model is pyguard's
scripted ``ChatModel`` replaying the incident (``get_shipment_status`` seven times with the same order id, then with
the id prefixed ``SO-``). No network, no API key.

Exit status (:mod:`pyguard.cli.exit_codes`): 0 the runs were shown (whatever their outcomes: showing them is the
job), 1 a run could not be carried out, 2 a bad option, 3 no JDK or bridge jars (the JVM cannot start).
"""

from __future__ import annotations

import json
from typing import Any

import click

from pyguard.cli.exit_codes import fail
from pyguard.errors import PyguardError
from pyguard.result import RunResult

__all__ = ["demo"]

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
        "answer_source": result.answer_source,
        "wrap_up_tokens": result.record.end.wrap_up_tokens if result.record.end else None,
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
    out: dict[str, Any] = {
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


_SIDES = (
    ("unguarded", "unguarded (LangChain4j defaults)"),
    ("guarded", "guarded (pyguard default policy)"),
    ("guarded_reflection_ignored", "guarded, the agent ignores the reflection"),
)


def _cell(value: Any) -> str:
    if value is None or value == "" or value == []:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return str(value)


def render_demo(out: dict[str, Any], console: Any) -> None:
    """The three runs side by side (counts, with thousands separators), then each run's full reason and answer
    below the table: a table cell would cut them exactly where the repeated call is named."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"pyguard demo: {out['scenario']}  ({out['agent']})", title_justify="left")
    table.add_column("")
    for _, title in _SIDES:
        table.add_column(title, justify="right")
    sides = [out[key] for key, _ in _SIDES]
    for name, key in [
        ("outcome", "outcome"),
        ("model calls", "model_calls"),
        ("tool calls", "tool_calls"),
        ("total tokens", "total_tokens"),
        ("reflection after call", "reflections_after"),
    ]:
        table.add_row(name, *[escape(_cell(side.get(key))) for side in sides])
    console.print(table)
    if out.get("guarded_token_share") is not None:
        console.print(f"The guarded run used {out['guarded_token_share']:.0%} of the unguarded run's tokens.")
    for (_, title), side in zip(_SIDES, sides, strict=False):
        console.print(f"\n[bold]{escape(title)}[/]: {escape(_cell(side.get('outcome')))}", highlight=False)
        console.print(f"  why it ended: {escape(_cell(side.get('reason')))}", highlight=False, soft_wrap=True)
        label = {
            "wrap_up": "answer (wrap-up: one last call without tools after the stop)",
            "salvaged": "answer (salvaged: the run was stopped)",
            "stop_message": "answer (the stop message: the run was stopped)",
        }.get(side.get("answer_source") or ("salvaged" if side.get("outcome") != "succeeded" else ""), "answer")
        console.print(f"  {label}: {escape(_cell(side.get('answer')))}", highlight=False, soft_wrap=True)
        if side.get("trace"):
            console.print(f"  trace: {escape(str(side['trace']))}", highlight=False, soft_wrap=True)


def _table(out: dict[str, Any]) -> None:
    from rich.console import Console

    render_demo(out, Console())


@click.command(name="demo")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
@click.option(
    "--seed", type=int, default=None, help="Seed of the scripted model's stochastic turns (default: the scenario's)."
)
@click.option(
    "--over-http", is_flag=True, help="Serve the model over the local OpenAI-compatible server (OpenAiChatModel)."
)
@click.option(
    "--trace-dir", type=click.Path(file_okay=False), default=None, help="Write the guarded run's JSONL trace here."
)
def demo(as_json: bool, seed: int | None, over_http: bool, trace_dir: str | None) -> None:
    """Run the logistics incident unguarded and guarded, side by side (no network, no key)."""
    try:
        out = run_demo(seed=seed, over_http=over_http, trace_dir=trace_dir)
    except PyguardError as exc:
        fail(exc)
    if as_json:
        click.echo(json.dumps(out, indent=2))
    else:
        _table(out)
