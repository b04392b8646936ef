"""Which units of a task type were read as censored, and why: the counts per :class:`~pyguard.calibrate.runs.Reading`
and the statement the report and the warnings give (with how to change the reading)."""

from __future__ import annotations

import numpy as np

from pyguard.calibrate.models import Censoring
from pyguard.calibrate.runs import Reading, RunArrays

__all__: list[str] = []

_HOW_TO_CHANGE = (
    "to change it: --terminal-tools NAMES names the tools that end a run when called last (a purchase click, "
    "'act' when it ends a game), a 'halted' (or 'truncated') field per run says whether the recording cut it, "
    "--labels gives outcomes"
)


def _count(reading: np.ndarray, which: Reading) -> int:
    return int(np.sum(reading == which))


def censoring_summary(one: RunArrays, what: str) -> Censoring | None:
    """The censoring reading of one task type (``what``: 'runs' or 'turns'); None when the columns carry no
    reading (built from columns elsewhere)."""
    if one.reading is None:
        return None
    r = one.reading
    c = Censoring(
        cap_field=_count(r, Reading.CAP_FIELD),
        no_footer=_count(r, Reading.NO_FOOTER),
        stopped=_count(r, Reading.STOPPED),
        tool_call_unlabelled=_count(r, Reading.TOOL_CALL_UNLABELLED),
        at_longest_run=_count(r, Reading.AT_LONGEST_RUN),
        failures_ended_early=_count(r, Reading.FAILED_EARLY),
    )
    uses_longest = (r == Reading.AT_LONGEST_RUN) | (r == Reading.FAILED_EARLY)
    longest = sorted({int(v) for v in one.longest_run[uses_longest]}) if one.longest_run is not None else []
    c.longest_run = longest
    c.statement = _statement(one, c, what)
    return c


def _statement(one: RunArrays, c: Censoring, what: str) -> str:
    name = one.task_types[0]
    total = c.cap_field + c.no_footer + c.stopped + c.tool_call_unlabelled + c.at_longest_run
    parts = []
    if c.cap_field:
        parts.append(f"{c.cap_field} reached the cap they ran under (their recording or footer says so)")
    if c.at_longest_run:
        caps = "/".join(str(v) for v in c.longest_run)
        parts.append(
            f"{c.at_longest_run} labelled failures ended calling a tool at {caps} calls, the longest run of their "
            "task type and source, taken as the recording's cap"
        )
    if c.tool_call_unlabelled:
        parts.append(f"{c.tool_call_unlabelled} ended calling a tool with no label and nothing saying they ended")
    if c.no_footer:
        parts.append(f"{c.no_footer} have no footer (cut short)")
    if c.stopped:
        parts.append(f"{c.stopped} were stopped by a guard or cancelled")
    head = f"task type {name!r}: {total} of {one.runs} {what} read as censored" + (
        f" ({'; '.join(parts)})" if parts else ""
    )
    if c.failures_ended_early:
        head += (
            f"; {c.failures_ended_early} labelled failures that ended calling a tool below the longest run of their "
            "task type and source are failures"
        )
    if c.tool_call_unlabelled or c.at_longest_run or c.failures_ended_early:
        head += f"; {_HOW_TO_CHANGE}"
    return head


def agent_cap_warning(task_type: str, round_trips: int, runs: int, calibration_cap: int | None) -> str:
    """The warning naming the agent's own ``maxToolCallingRoundTrips``: the model calls it allows, below the
    calibration's cap or not, and how to see past it."""
    calls = round_trips + 1
    if calibration_cap is not None and round_trips >= calibration_cap:  # the cap pyguard's own agents run under
        return (
            f"task type {task_type!r}: the calibration's cap ({calibration_cap}: the task file's cap, or --cap) ended "
            f"{runs} runs at {calls} model calls, as the maxToolCallingRoundTrips({round_trips}) of pyguard's agent "
            f"(LangChain4j); c(n) past {calls} is unknown. To see past it, raise the cap and run again with a new "
            "--traces dir"
        )
    below = (
        f", below the calibration's cap of {calibration_cap} model calls (--cap)"
        if calibration_cap is not None and calls < calibration_cap
        else ""
    )
    return (
        f"task type {task_type!r}: your agent's own maxToolCallingRoundTrips({round_trips}) (LangChain4j) ended "
        f"{runs} runs at {calls} model calls{below}; c(n) past {calls} is unknown. To see past it, have your factory "
        "read maxToolCallingRoundTrips from a system property (Integer.getInteger(NAME, default)) and name it in the "
        "task file (factory.round_trips_property = NAME): pyguard sets it to the calibration's cap; then run again "
        "with a new --traces dir"
    )


def agent_cap_notes(one: RunArrays) -> list[str]:
    """One warning per ``maxToolCallingRoundTrips`` of the agent that ended units of this type."""
    if one.agent_round_trips is None:
        return []
    caps = one.run_cap[one.run_cap > 0] if one.run_cap is not None else np.zeros(0, np.int64)
    cap = int(caps.max()) if len(caps) else None
    values, counts = np.unique(one.agent_round_trips[one.agent_round_trips > 0], return_counts=True)
    return [agent_cap_warning(one.task_types[0], int(v), int(k), cap) for v, k in zip(values, counts, strict=True)]
