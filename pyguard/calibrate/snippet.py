"""Paste-ready numbers: a Java constants class, a .properties file and pyguard's ``[tool.pyguard]`` budgets.

LangChain4j 1.19.0 semantics the numbers follow, measured on a real AiServices agent
(``tests/jvm_calibrate/test_snippet_round_trips.py``): with ``maxToolCallingRoundTrips(R)`` a run makes at most
R + 1 model calls; when call R still requests tools, the tools run, call R + 1 is made, its response is discarded
(even an answer) and the loop throws "Something is wrong, exceeded R tool calling round trips". So N* model calls
are ``maxToolCallingRoundTrips(N* - 1)`` (:func:`round_trips_for`), and the answers LangChain4j keeps are those of
calls 1..N* - 1: the snippet says c(N* - 1), the success share that setting gives. N* = 1 cannot be written
(``maxToolCallingRoundTrips`` must be at least 1, two calls): the snippet says so. pyguard's own budgets (TOML) and
an agentic ``loopBuilder().maxIterations(k)`` count model calls / loop iterations: ``k = N*`` only when each
iteration makes one model call.

Unguarded agents use the N* figures. Agents guarded by pyguard keep the Java cap at the hard cap (the fail-safe
behind pyguard's dynamic budget, which starts at the base budget). A type where not running the agent is cheaper
still gets the cheapest cap that runs it (when any run succeeded), marked as such.
"""

from __future__ import annotations

import re

import tomli_w

from pyguard.base.events import UNTYPED
from pyguard.calibrate.models import CalibrationReport, PolicyProposal, TaskTypeCalibration
from pyguard.calibrate.units import unit_words

__all__: list[str] = []


def round_trips_for(model_calls: int) -> int:
    """LangChain4j's ``maxToolCallingRoundTrips`` for at most ``model_calls`` model calls (R round trips make
    R + 1 calls); 1 at least (the smallest LangChain4j setting, two calls)."""
    return max(model_calls - 1, 1)


def _cap_of(t: TaskTypeCalibration) -> int | None:
    """The cap a snippet writes: N*, else the cheapest cap that runs the agent when any run succeeded."""
    if t.recommended_max_iterations is not None:
        return t.recommended_max_iterations
    if t.decision is not None and t.decision.successes_uncapped:
        return t.decision.cheapest_cap
    return None


def _round_trips_note(t: TaskTypeCalibration, calls: int) -> str:
    """What ``maxToolCallingRoundTrips(round_trips_for(calls))`` gives, in LangChain4j's terms, and the setting that
    keeps an answer at call ``calls`` instead."""
    r = round_trips_for(calls)
    at = t.c[min(calls, len(t.c)) - 1]
    if calls == 1:
        return (
            f"maxToolCallingRoundTrips({r}) is LangChain4j's smallest: up to 2 model calls, answers kept from call 1 "
            f"(c(1) = {at:.3f})"
        )
    kept = t.c[min(r, len(t.c)) - 1]
    return (
        f"maxToolCallingRoundTrips({r}): up to {calls} model calls; LangChain4j keeps answers up to call {r} "
        f"(c({r}) = {kept:.3f}) and discards call {calls}'s. maxToolCallingRoundTrips({calls}) keeps answers up to "
        f"call {calls} (c({calls}) = {at:.3f}) and makes up to {calls + 1} calls"
    )


def java_identifier(task_type: str) -> str:
    """UPPER_SNAKE constant prefix for a task type (``"order-lookup"`` -> ``"ORDER_LOOKUP"``)."""
    name = re.sub(r"[^0-9A-Za-z]+", "_", task_type).strip("_").upper() or "DEFAULT"
    return "T_" + name if name[0].isdigit() else name


def _property_key(task_type: str) -> str:
    """A task type as a .properties key part (as :mod:`pyguard.calibrate.report` names its files: ``(untyped)`` is
    ``untyped``)."""
    return re.sub(r"[^0-9A-Za-z_.-]+", "_", task_type).strip("._") or "default"


def _summary(t: TaskTypeCalibration, report: CalibrationReport) -> str:
    conf = f"{report.config.confidence:.0%}"
    runs = f"{t.runs} runs" + (f" ({t.units} turns)" if t.per_turn else "")
    if t.recommended_max_iterations is None:
        return f"{t.task_type}: no cap, {runs}: {t.no_cap}"
    return (
        f"{t.task_type}: N* = {t.recommended_max_iterations} {t.unit} ({conf} CI {t.ci_low}-{t.ci_high}), "
        f"c(N*) = {t.success_at_optimum:.3f}, {runs}" + (" [N* at the edge of the data]" if t.at_horizon else "")
    )


def _capped(report: CalibrationReport) -> list[TaskTypeCalibration]:
    """The task types with a recommended cap (pyguard's budgets: only where a cap pays off)."""
    return [t for t in report.task_types if t.recommended_max_iterations is not None and t.policy is not None]


def _cheapest_only(report: CalibrationReport) -> list[TaskTypeCalibration]:
    """Types where not running is cheaper but some run succeeded: the snippets carry their cheapest cap."""
    return [t for t in _uncapped(report) if _cap_of(t) is not None]


def _policy(t: TaskTypeCalibration) -> PolicyProposal:
    """The policy of a type from :func:`_capped` (which keeps only types with one)."""
    assert t.policy is not None
    return t.policy


def _uncapped(report: CalibrationReport) -> list[TaskTypeCalibration]:
    return [t for t in report.task_types if t.recommended_max_iterations is None or t.policy is None]


def _header(report: CalibrationReport) -> str:
    cfg = report.config
    unit = unit_words(report.cost_unit, cfg.price_per_1k_tokens, cfg.cost_per_call)
    return (
        f"pyguard calibrate: failure cost d = {cfg.failure_cost:g}, costs in {unit}, bootstrap {cfg.bootstrap}, "
        f"seed {cfg.seed}"
    )


def java_snippet(report: CalibrationReport, class_name: str = "CalibratedLimits") -> str:
    """A constants class plus, in comments, where each constant goes."""
    lines = [
        f"/** Generated by {_header(report)}. */",
        f"public final class {class_name} {{",
        f"    private {class_name}() {{}}",
    ]
    for t in _uncapped(report):
        lines += ["", f"    // {_summary(t, report)}"]
        if (cheapest := _cap_of(t)) is not None:
            p = java_identifier(t.task_type)
            lines += [
                f"    /** Not running is cheaper; if you run it, the cheapest cap: {_round_trips_note(t, cheapest)}. */",
                f"    public static final int {p}_MAX_TOOL_CALLING_ROUND_TRIPS = {round_trips_for(cheapest)};",
            ]
    for t in _capped(report):
        p, n = java_identifier(t.task_type), t.recommended_max_iterations or 0
        lines += [
            "",
            f"    /** {_summary(t, report)}. */",
            f"    /** {_round_trips_note(t, n)}. */",
            f"    public static final int {p}_MAX_TOOL_CALLING_ROUND_TRIPS = {round_trips_for(n)};",
            "    /** Agentic loop cap, assuming one model call per loop iteration. */",
            f"    public static final int {p}_MAX_ITERATIONS = {n};",
            f"    /** Java cap to keep when pyguard guards the run: up to pyguard's hard cap, {_policy(t).hard_cap} calls. */",
            f"    public static final int {p}_GUARDED_MAX_TOOL_CALLING_ROUND_TRIPS = {round_trips_for(_policy(t).hard_cap)};",
        ]
        if t.token_budget is not None:
            lines.append(f"    public static final long {p}_TOKEN_BUDGET = {t.token_budget.recommended_tokens}L;")
    capped = _capped(report) + _cheapest_only(report)
    if not capped:
        return "\n".join(lines + ["}", ""])
    first = java_identifier(capped[0].task_type)
    lines += [
        "}",
        "",
        "// Unguarded AiServices:",
        "//   AiServices.builder(Assistant.class).chatModel(model)",
        f"//       .maxToolCallingRoundTrips({class_name}.{first}_MAX_TOOL_CALLING_ROUND_TRIPS).build();",
        "",
    ]
    if _capped(report):
        lines[-1:] = [
            "// langchain4j-agentic loop:",
            f"//   AgenticServices.loopBuilder().subAgents(...).maxIterations({class_name}.{first}_MAX_ITERATIONS).build();",
            "",
        ]
    return "\n".join(lines)


def properties_snippet(report: CalibrationReport) -> str:
    lines = [f"# {_header(report)}"]
    for t in _uncapped(report):
        lines.append(f"# {_summary(t, report)}")
        if (cheapest := _cap_of(t)) is not None:
            k = f"pyguard.calibrate.{_property_key(t.task_type)}"
            lines += [
                f"# not running is cheaper; if you run it, the cheapest cap: {_round_trips_note(t, cheapest)}",
                f"{k}.maxToolCallingRoundTrips={round_trips_for(cheapest)}",
                f"{k}.maxModelCalls={cheapest}",
            ]
    for t in _capped(report):
        k, n = f"pyguard.calibrate.{_property_key(t.task_type)}", t.recommended_max_iterations or 0
        lines += [
            f"# {_summary(t, report)}",
            f"# {_round_trips_note(t, n)}",
            f"{k}.maxToolCallingRoundTrips={round_trips_for(n)}",
            f"{k}.maxModelCalls={n}",
            f"{k}.maxIterations={n}",
            f"{k}.guardedMaxToolCallingRoundTrips={round_trips_for(_policy(t).hard_cap)}",
        ]
        if t.token_budget is not None:
            lines.append(f"{k}.tokenBudget={t.token_budget.recommended_tokens}")
    return "\n".join(lines) + "\n"


def toml_snippet(report: CalibrationReport) -> str:
    """``[tool.pyguard]`` budgets in the layout :class:`pyguard.engine.config.PolicyConfig` loads: per-type
    ``base_budget`` / ``hard_cap`` under ``task_types``, and ``caps.max_total_tokens`` (a global cap in the
    engine) set to the largest per-type token hard cap so that no type is cut below its own. The runs without a task
    type (:data:`pyguard.base.events.UNTYPED`) get the policy's own ``base_budget`` / ``hard_cap``: that is the budget a
    run without a task type is given."""
    capped = _capped(report)
    types = {t.task_type: {"base_budget": _policy(t).base_budget, "hard_cap": _policy(t).hard_cap} for t in capped}
    own = types.pop(UNTYPED, {})
    table: dict = own | {"task_types": types}
    token_caps = [m for t in capped if (m := _policy(t).max_total_tokens) is not None]
    if token_caps:
        table["caps"] = {"max_total_tokens": max(token_caps)}
    notes = (
        [f"# {_header(report)}"]
        + [
            f"# {t.task_type}: token budget {_policy(t).base_token_budget}, token hard cap {_policy(t).max_total_tokens}"
            for t in capped
            if _policy(t).max_total_tokens is not None
        ]
        + [
            f"# {t.task_type}: base budget {t.recommended_max_iterations} model calls; unguarded LangChain4j: "
            f"{_round_trips_note(t, t.recommended_max_iterations or 0)}"
            for t in capped
        ]
        + [f"# {_summary(t, report)}" for t in _uncapped(report)]
        + [
            f"# {t.task_type}: if you run it anyway, the cheapest cap is {c} model calls: {_round_trips_note(t, c)}"
            for t in _cheapest_only(report)
            if (c := _cap_of(t)) is not None
        ]
    )
    return "\n".join(notes) + "\n" + tomli_w.dumps({"tool": {"pyguard": table}})
