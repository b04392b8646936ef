"""The gate end to end, on runs already in memory: resolve outcomes, summarise, evaluate."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyguard.base.events import RunRecord
from pyguard.check.gate import GateConfig, GateReport, evaluate
from pyguard.check.outcomes import Replayer, resolve_runs
from pyguard.check.summary import RunSetSummary, summarize

__all__: list[str] = []


def check_runs(
    runs: Sequence[RunRecord],
    config: GateConfig | None = None,
    baseline: RunSetSummary | None = None,
    *,
    fmt: str | None = None,
    make_replayer: Callable[[], Replayer] | None = None,
) -> GateReport:
    """Check ``runs`` against ``config``'s thresholds and, when given, a baseline.

    ``fmt`` is the format the runs were read from (``"pyguard"``, ``"openai"`` or None when unknown): it decides
    which runs need a policy replay (see :func:`pyguard.check.outcomes.needs_replay`). ``make_replayer`` builds
    the replayer only if one is needed. Raises InputError on unusable input.
    """
    facts = resolve_runs(runs, fmt, make_replayer)
    return evaluate(summarize(facts), config or GateConfig(), baseline)
