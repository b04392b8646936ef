"""The unit of every cost a calibration reports, and how a cost is written.

- a price per 1k tokens: costs in that currency (``currency``); runs without usage cost ``--cost-per-call`` each
  (in the same currency);
- no price, every calibrated type costed per call (no token usage) at ``--cost-per-call C``: costs in C's unit,
  ``calls`` when C is 1 (every call costs one), else ``currency``;
- no price otherwise: ``tokens`` (a type without usage costs the mean tokens of a call of the types with usage).

Without a price, types with token usage and types costed at ``--cost-per-call`` would be in two units (tokens and
C's): refused, naming both (:func:`cost_unit`). Costs are written with their decimals (:func:`format_cost`).
"""

from __future__ import annotations

from pyguard.base.errors import InputError

__all__: list[str] = []


def cost_unit(
    price_per_1k_tokens: float | None, cost_per_call: float | None, with_tokens: list[str], without: list[str]
) -> str:
    """The report's cost unit; raises :class:`InputError` when, without a price, the types would be costed in
    tokens and per call at once (``with_tokens`` / ``without``: the type names with and without token usage)."""
    if price_per_1k_tokens is not None:
        return "currency"
    if cost_per_call is None or not without:
        return "tokens"
    if with_tokens:
        shown = lambda names: ", ".join(repr(n) for n in names[:3]) + (" ..." if len(names) > 3 else "")  # noqa: E731
        raise InputError(
            f"these runs mix units: task types {shown(with_tokens)} report token usage (costed in tokens), "
            f"{shown(without)} report none (costed at --cost-per-call {cost_per_call:g}); without a price the two "
            "cannot be added or compared with one failure cost. Pass --price-per-1k-tokens P (then --cost-per-call "
            "and --failure-cost are in P's currency), or calibrate the two kinds of runs apart"
        )
    return "calls" if cost_per_call == 1 else "currency"


def unit_words(unit: str, price_per_1k_tokens: float | None = None, cost_per_call: float | None = None) -> str:
    """The unit in words, for titles and labels."""
    if unit == "tokens":
        return "tokens"
    if unit == "calls":
        return "model calls"
    if price_per_1k_tokens is not None:
        return f"currency at {price_per_1k_tokens:g} per 1k tokens"
    return f"the unit of --cost-per-call ({cost_per_call:g} per model call)" if cost_per_call else "currency"


def format_cost(value: float, unit: str) -> str:
    """A cost with its decimals: 4 significant digits below 1,000 (``0.3142``, ``1.691``, ``27.35``), whole
    with thousands separators above and for tokens (a token count is whole)."""
    if abs(value) >= 1000 or unit == "tokens":
        return f"{value:,.0f}"
    if value == 0:
        return "0"
    return f"{value:.4g}" if abs(value) >= 1e-4 else f"{value:.2e}"
