"""``pyguard demo``: the logistics incident on a real LangChain4j AiServices agent, unguarded and guarded.

The agent is LangChain4j's own AiServices loop with real @Tool methods (``LogisticsTools``); the model is pyguard's
scripted ``ChatModel`` replaying the incident (``get_shipment_status`` seven times with the same order id, then with
the id prefixed ``SO-``). No network, no API key.

Exit status (:mod:`pyguard.cli.exit_codes`): 0 the runs were shown (whatever their outcomes: showing them is the
job), 1 a run could not be carried out, 2 a bad option, 3 no JDK or bridge jars (the JVM cannot start).
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import click

from pyguard.base.errors import PyguardError
from pyguard.base.events import sum_tokens
from pyguard.cli.exit_codes import fail
from pyguard.result import RunResult

__all__: list[str] = []

SCENARIO = "logistics_incident"
TASK = "Where is order 12345? Tell me its shipment status."


def _tokens(result: RunResult) -> dict[str, int | None]:
    """The tokens billed for a run, counted from the trace: its model calls' plus the wrap-up call's (the footer's
    ``wrap_up_tokens``), the same total as :attr:`RunResult.total_tokens`, with the wrap-up's share apart."""
    calls = sum_tokens(result.record.events)
    wrap_up = result.record.end.wrap_up_tokens if result.record.end else None
    billed = None if calls is None and wrap_up is None else (calls or 0) + (wrap_up or 0)
    return {"calls_tokens": calls, "wrap_up_tokens": wrap_up, "billed_tokens": billed}


def _side(result: RunResult) -> dict[str, Any]:
    stop = next((d for d in result.decisions if d.stops), None)
    return {
        "outcome": result.outcome.value,
        "reason": result.reason,
        "model_calls": result.model_calls,
        "tool_calls": result.tool_calls,
        "input_tokens": result.end.input_tokens,
        "output_tokens": result.end.output_tokens,
        "total_tokens": result.total_tokens,
        "reflections_after": result.reflections,
        "reflection_rules": [d.rule for d in result.decisions if d.action.value == "reflect"],
        "stop_rule": result.evidence.get("rule"),
        "stopped_after": stop.iteration if stop is not None else None,
        "answer": result.answer,
        "answer_source": result.answer_source,
        **_tokens(result),
        "trace": result.trace_path,
    }


def run_demo(*, seed: int | None = None, over_http: bool = False, trace_dir: str | None = None) -> dict[str, Any]:
    """The demo's three runs (unguarded; guarded; guarded with an agent that ignores the reflection);
    returns the ``--json`` object."""
    # lazy: the guard and the JVM edge load once the demo runs, not for `pyguard demo --help`
    from pyguard.jvm import load_scenario, scripted_model, start_jvm, start_openai_server
    from pyguard.live.guard import Guard, run_unguarded

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
    ("unguarded", "unguarded (LangChain4j defaults)", "unguarded"),
    ("guarded", "guarded (pyguard default policy)", "guarded"),
    ("guarded_reflection_ignored", "guarded, the agent ignores the reflection", "ignores reflection"),
)

_SOURCES = {
    "model": "the model's final answer",
    "wrap_up": "wrap-up: one last call without tools after the stop",
    "salvaged": "salvaged: the last text before the stop",
    "stop_message": "the stop message: no model call after the stop",
}


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


def _one_line(text: str | None, width: int) -> str:
    """``text`` on one line of at most ``width`` characters, cut with an ellipsis (the whole answer is in --json)."""
    flat = " ".join((text or "-").split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)].rstrip() + "…"


def _wrap_up_cell(side: dict[str, Any]) -> str:
    wrap, billed = side.get("wrap_up_tokens"), side.get("billed_tokens")
    if wrap is None:
        return "-"
    return f"{wrap:,} ({wrap / billed:.0%})" if billed else f"{wrap:,}"


def _guard_line(side: dict[str, Any]) -> str | None:
    """Where the guard acted: 'reflected after call 3 (repeat_no_gain); stopped after call 4 (fruitless_retry)'."""
    parts = [
        f"reflected after call {at} ({rule or 'rule not recorded'})"
        for at, rule in zip(side.get("reflections_after") or [], side.get("reflection_rules") or [], strict=False)
    ]
    if side.get("stopped_after") is not None:
        parts.append(f"stopped after call {side['stopped_after']} ({side.get('stop_rule') or 'rule not recorded'})")
    return "; ".join(parts) or None


def _summary_table(sides: list[dict[str, Any]]) -> Any:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("")
    for _, _, short in _SIDES:
        table.add_column(short, justify="right")
    rows = [
        ("outcome", lambda s: _cell(s.get("outcome"))),
        ("model calls", lambda s: _cell(s.get("model_calls"))),
        ("tool calls", lambda s: _cell(s.get("tool_calls"))),
        ("tokens billed", lambda s: _cell(s.get("billed_tokens", s.get("total_tokens")))),
        ("  of which wrap-up", _wrap_up_cell),
        ("reflected after call", lambda s: _cell(s.get("reflections_after"))),
        ("stopped after call", lambda s: _cell(s.get("stopped_after"))),
    ]
    for name, get in rows:
        table.add_row(name, *[escape(get(side)) for side in sides])
    return table


def _para(console: Any, text: str) -> None:
    """``text`` wrapped to the console's width, indented by two (four for its continuation lines)."""
    from rich.markup import escape

    lines = textwrap.wrap(text, width=max(console.width, 40), initial_indent="  ", subsequent_indent="    ")
    console.print(escape("\n".join(lines)), highlight=False)


def render_demo(out: dict[str, Any], console: Any) -> None:
    """The three runs side by side (fits 80 columns), then per run: where the guard acted, why the run ended (whole),
    its answer cut to one line with where it came from, and its trace."""
    from rich.markup import escape

    sides = [out[key] for key, _, _ in _SIDES]
    console.print(f"[bold]pyguard demo: {escape(out['scenario'])}[/]\n{escape(out['agent'])}", highlight=False)
    console.print(_summary_table(sides))
    if out.get("guarded_token_share") is not None:
        console.print(f"The guarded run used {out['guarded_token_share']:.0%} of the unguarded run's tokens.")
    for (_, title, _), side in zip(_SIDES, sides, strict=False):
        console.print(f"\n[bold]{escape(title)}[/]: {escape(_cell(side.get('outcome')))}", highlight=False)
        guard = _guard_line(side)
        if guard:
            _para(console, f"guard: {guard}")
        _para(console, f"why it ended: {_cell(side.get('reason'))}")
        source = side.get("answer_source") or ("salvaged" if side.get("outcome") != "succeeded" else "model")
        label = f"  answer ({_SOURCES.get(source, source)}"
        if source == "wrap_up" and side.get("wrap_up_tokens") is not None:
            label += f", {side['wrap_up_tokens']:,} tokens"
        console.print(f"{escape(label)}):", highlight=False)
        console.print("    " + escape(_one_line(side.get("answer"), console.width - 4)), highlight=False)
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
