"""One meaning of a token total (issue 24): the sum over the model calls that reported usage, and a flag when some did
not (a lower bound, said so); None only when none did. Before, the importers, the OTLP import and replay said None
when any call lacked usage, and run trees counted unknown as 0 with no flag."""

from __future__ import annotations

from pathlib import Path

from pyguard.base.ending import TokenTotals, token_totals, tree_totals
from pyguard.base.events import IterationEvent, Outcome, RunEnd, RunRecord, RunStart, ToolCall
from pyguard.engine.tree import BudgetNode, TreeLimits
from pyguard.live.nested import UnguardedTree
from pyguard.otel import import_otlp
from pyguard.replay import replay_run, replay_runs
from pyguard.result import RunResult
from pyguard.trace.ending import build_end

OTEL = Path(__file__).resolve().parents[1] / "data" / "otel" / "genai_spans.json"


def call(i: int, total: int | None = None, *, final: bool = False, run_id: str = "r") -> IterationEvent:
    calls = () if final else (ToolCall(id=f"c{i}", name="lookup", arguments=f'{{"q": {i}}}'),)
    return IterationEvent(run_id=run_id, index=i, total_tokens=total, tool_calls=calls, text="ok" if final else None)


MIXED = [call(1, 100), call(2), call(3, 50, final=True)]  # the second call reported no usage


def test_the_totals_of_events_and_of_many_runs():
    assert token_totals(MIXED) == TokenTotals(0, 0, 150, True)
    assert token_totals([call(1), call(2, final=True)]) == TokenTotals(None, None, None, False)
    whole = token_totals([call(1, 10), call(2, 5, final=True)])
    assert whole.total == 15 and not whole.partial
    assert tree_totals([whole, token_totals([call(1)])]) == TokenTotals(0, 0, 15, True)  # a run with none: partial
    assert tree_totals([whole, whole]).total == 30 and not tree_totals([whole, whole]).partial
    assert tree_totals([]) == TokenTotals(None, None, None, False)


def test_an_imported_run_with_a_call_without_usage_keeps_the_known_sum_and_says_it_is_partial():
    end = build_end("r", MIXED, label=True, imported_from="openai", source="f.jsonl")
    assert (end.total_tokens, end.tokens_partial) == (150, True)


def test_an_otlp_run_with_a_call_without_usage_keeps_the_known_sum_and_says_it_is_partial():
    runs = import_otlp(OTEL).runs
    partial = next(r for r in runs if any(e.total_tokens is None for e in r.events))
    assert partial.end is not None and partial.end.tokens_partial is True
    assert partial.end.total_tokens == sum(e.tokens or 0 for e in partial.events) == 760
    whole = next(r for r in runs if r is not partial)  # every call reported: not partial
    assert whole.end is not None and (whole.end.total_tokens, whole.end.tokens_partial) == (312, False)


def test_replay_states_the_known_sum_with_its_flag_and_leaves_partial_runs_out_of_its_token_figures():
    start = RunStart(run_id="r")
    end = RunEnd(run_id="r", outcome=Outcome.SUCCEEDED, success_label=True)
    mixed = replay_run(RunRecord(start=start, events=MIXED, end=end))
    assert (mixed.tokens, mixed.tokens_partial) == (150, True)
    whole_events = [call(1, 100, run_id="w"), call(2, 50, final=True, run_id="w")]
    whole = RunRecord(start=RunStart(run_id="w"), events=whole_events, end=end.model_copy(update={"run_id": "w"}))
    report = replay_runs([RunRecord(start=start, events=MIXED, end=end), whole])
    assert report.summary.successful.tokens == 150  # the whole run's only
    assert report.summary.successful.runs_without_usage == 1


def _result(run_id: str, events: list[IterationEvent], children: tuple[RunResult, ...] = ()) -> RunResult:
    end = RunEnd(run_id=run_id, outcome=Outcome.SUCCEEDED)
    return RunResult(record=RunRecord(start=RunStart(run_id=run_id), events=events, end=end), children=children)


def test_a_run_tree_says_when_its_total_is_a_lower_bound_and_never_turns_unknown_into_0():
    child = _result("c", [call(1, run_id="c"), call(2, final=True, run_id="c")])  # no usage at all
    root = _result("p", [call(1, 40, run_id="p"), call(2, 2, final=True, run_id="p")], (child,))
    assert root.tree_tokens == TokenTotals(0, 0, 42, True)
    assert root.tree_total_tokens == 42
    assert child.tree_total_tokens is None  # was 0: unknown read as nothing used
    assert UnguardedTree(None, None, [call(1), call(2, final=True)]).total_tokens is None
    assert UnguardedTree(None, None, MIXED).tokens.partial is True


def test_a_tree_budget_marks_its_token_spend_partial_when_a_call_reported_none():
    node = BudgetNode.root("r", TreeLimits(tokens=1000), clock=lambda: 0.0)
    node.charge_event(call(1, 100))
    assert not node.spent.tokens_partial and "tokens_partial" not in node.spent.as_dict()
    node.charge_event(call(2))
    assert node.spent.tokens == 100 and node.spent.tokens_partial is True
    assert node.spent.as_dict()["tokens_partial"] is True
