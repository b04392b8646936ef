"""One ending (issue 31 point 2): a run's outcome is decided once, by ``pyguard.base.ending.settle`` (the engine's stop
included), and the offline tools only read it. Beside test_one_home.py (one module defines each concept)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from pyguard.base.ending import stop_outcome
from pyguard.base.events import Outcome

ROOT = Path(__file__).resolve().parents[2]

READERS = (
    "pyguard/check",
    "pyguard/replay.py",
    "pyguard/parallel.py",
    "pyguard/calibrate",
    "pyguard/live/calibration",
    "pyguard/report",
    "pyguard/tune",
)
"""The offline readers of an outcome: they count, compare and print outcomes the footers (or a replay) settled."""

MAKERS = {
    "pyguard/calibrate/synthetic.py": "makes synthetic runs: it chooses the outcome of each made-up run",
    "pyguard/tune/synthetic.py": "makes synthetic runs: it chooses the outcome of each made-up run",
}
"""Files that may choose an outcome, and why."""

LIVE = ("pyguard/engine/session.py", "pyguard/live")
"""The engine's session and the live runs: they settle a run's end (``settle``) and make the stops ``settle`` keeps,
so they may name the outcome of a stop they make, never pick one for a stop that names none."""

STOPS = {
    "pyguard/live/agent_guard.py Outcome.CANCELLED": "a conversation's run still open when it closes: cancelled",
    "pyguard/live/agent_guard.py Outcome.EXPIRED": "the conversation's limits ran out before a turn: a limit's stop",
    "pyguard/live/nested_run.py Outcome.EXPIRED": "the tree's budget ran out (for this run, a child, a descendant)",
    "pyguard/live/run.py Outcome.CANCELLED": "cancel(): the stop a user asked for",
}
"""Stops the live runs make (outside the engine), each naming its own outcome, and why: ``file Outcome.X``."""

_READS = {"count", "get", "index"}
"""Methods an outcome member is passed to only to be looked up."""


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _chooses(node: ast.Attribute, parent: ast.AST) -> bool:
    """True when the member ``node`` (``Outcome.X``) is chosen as an outcome, not read: a value returned, assigned,
    given as an argument, a fallback (``or``), a branch of ``a if c else b``, a mapping's value. Reads: an operand
    of a comparison, a mapping's key, an index, a member of a literal collection (which outcomes), an argument of a
    look-up (``count``)."""
    if isinstance(parent, ast.Call):
        callee = parent.func
        return not (isinstance(callee, ast.Attribute) and callee.attr in _READS)
    if isinstance(parent, ast.Dict):
        return any(v is node for v in parent.values)
    if isinstance(parent, ast.IfExp):
        return node is not parent.test
    if isinstance(parent, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
        return parent.value is node
    return isinstance(parent, ast.BoolOp | ast.Return | ast.keyword | ast.Yield | ast.Lambda)


def outcomes_chosen(root: Path, readers: tuple[str, ...] = READERS) -> list[str]:
    """``path:line Outcome.X`` for each outcome member chosen in the readers (outside :data:`MAKERS`)."""
    files = sorted(p for r in readers for p in ([root / r] if r.endswith(".py") else sorted((root / r).rglob("*.py"))))
    found = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        if rel in MAKERS or not path.exists():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = _parents(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "Outcome"
                and node.attr.isupper()
                and _chooses(node, parents[node])
            ):
                found.append(f"{rel}:{node.lineno} Outcome.{node.attr}")
    return sorted(found, key=lambda f: (f.split(":")[0], int(f.split(":")[1].split()[0])))


def test_the_offline_readers_choose_no_outcome():
    # a replayed run's end comes out of the replay settled (pyguard.replay.guarded_end); check, calibrate, the report
    # read outcomes and never pick one (no `or Outcome.X` fallback, no outcome re-decided after settle)
    assert outcomes_chosen(ROOT) == []


def test_the_outcome_check_sees_a_choice(tmp_path):
    (tmp_path / "pyguard" / "check").mkdir(parents=True)
    (tmp_path / "pyguard" / "check" / "a.py").write_text(
        "def f(end, runs, v):\n"
        "    ok = end.outcome is Outcome.SUCCEEDED or end.outcome in (Outcome.FAILED, Outcome.EXPIRED)\n"
        "    names = {Outcome.STALLED: 'stall'}\n"
        "    n = runs.count(Outcome.ESCALATED)\n"
        "    x = v or Outcome.STALLED\n"
        "    y = Outcome.FAILED if ok else end.outcome\n"
        "    z = RunEnd(outcome=Outcome.EXPIRED)\n"
        "    return Outcome.SUCCEEDED\n"
    )
    assert outcomes_chosen(tmp_path, ("pyguard/check",)) == [
        "pyguard/check/a.py:5 Outcome.STALLED",
        "pyguard/check/a.py:6 Outcome.FAILED",
        "pyguard/check/a.py:7 Outcome.EXPIRED",
        "pyguard/check/a.py:8 Outcome.SUCCEEDED",
    ]


def settle_calls(root: Path, readers: tuple[str, ...]) -> list[str]:
    """``path:line`` of each call of ``settle`` under ``readers`` (folders)."""
    return [
        f"{path.relative_to(root).as_posix()}:{node.lineno}"
        for r in readers
        for path in sorted((root / r).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "settle"
    ]


def test_the_gate_and_the_statistics_settle_no_run():
    # the footers' writers settle (the engine, the importers, replay for the runs it replays, the live drivers);
    # check, calibrate, the tuner and the report read what they settled
    readers = ("pyguard/check", "pyguard/calibrate", "pyguard/report", "pyguard/tune")
    assert settle_calls(ROOT, readers) == []
    assert settle_calls(ROOT, ("pyguard/trace",)) != []  # the check sees one


def _made_elsewhere(found: list[str]) -> list[str]:
    return [f for f in found if f"{f.split(':')[0]} {f.split()[1]}" not in STOPS]


def fallbacks(root: Path, readers: tuple[str, ...]) -> list[str]:
    """``path:line`` of each ``x or Outcome.X`` under ``readers``: a fallback outcome for a stop that names none."""
    files = sorted(p for r in readers for p in ([root / r] if r.endswith(".py") else sorted((root / r).rglob("*.py"))))
    return [
        f"{path.relative_to(root).as_posix()}:{node.lineno}"
        for path in files
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.BoolOp)
        and any(isinstance(v, ast.Attribute) and getattr(v.value, "id", None) == "Outcome" for v in node.values)
    ]


def test_the_session_and_the_live_runs_choose_only_their_own_stops():
    # a stop that names no outcome gets one rule, in one home (pyguard.base.ending.stop_outcome): no `or Outcome.X`
    # here (three had one, each a different fallback); the outcomes chosen are the stops the live runs make
    assert _made_elsewhere(outcomes_chosen(ROOT, LIVE)) == []
    assert fallbacks(ROOT, LIVE) == []
    chosen = {f"{f.split(':')[0]} {f.split()[1]}" for f in outcomes_chosen(ROOT, LIVE)}
    assert chosen == set(STOPS)  # no stale entry in the allow-list


def test_the_fallback_check_sees_one(tmp_path):
    (tmp_path / "pyguard" / "live").mkdir(parents=True)
    (tmp_path / "pyguard" / "live" / "a.py").write_text("def f(stop):\n    return stop.outcome or Outcome.STALLED\n")
    assert fallbacks(tmp_path, ("pyguard/live",)) == ["pyguard/live/a.py:2"]


def test_a_stop_that_names_no_outcome_expired():
    # the engine's stops always name their outcome (every stop in the golden corpus does); the one loop that ends
    # without one is the agent's own cap: a limit ran out
    golden = json.loads((ROOT / "tests/unit/engine/data/decisions_golden.json").read_text())
    stops = [m for case in golden.values() for run in case.values() for m in run["x"] if m[1] == "stop"]
    assert stops and all(m[3] in ("stalled", "expired", "escalated") for m in stops)
    assert stop_outcome(None) is Outcome.EXPIRED
    assert [stop_outcome(o) for o in Outcome] == list(Outcome)
