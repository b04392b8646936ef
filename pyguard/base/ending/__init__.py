"""How a run ends: the one home of the outcome precedence, the footer, a token total and a reader's verdict.

Every writer of a footer (the engine's ``RunSession.finish``, the guard for a run the engine did not finish, live
calibration, the importers, the OTLP import, replay) settles the outcome with :func:`settle` and builds the footer
with :func:`footer`; every reader that asks "did it succeed, and on what evidence" (replay, ``pyguard check``,
calibration, the tuner) asks :func:`verdict`. This package sits below the engine, the guard, the JVM edge, trace,
otel and replay: it needs only the events.

- :mod:`pyguard.base.ending.causes`: :class:`Causes`, what a writer knows about how a run ended (the one declaration);
- :mod:`pyguard.base.ending.outcome`: how an agent ended (:class:`Ending`, :class:`RunEnding`), :func:`settle` and :func:`stop_outcome`;
- :mod:`pyguard.base.ending.footer`: :func:`footer`, :func:`end_from_events` and :class:`TokenTotals`;
- :mod:`pyguard.base.ending.verdict`: :func:`verdict`.
"""

from pyguard.base.ending.causes import Causes
from pyguard.base.ending.footer import EndNotes, TokenTotals, end_from_events, footer, token_totals, tree_totals
from pyguard.base.ending.outcome import Ending, RunEnding, Settled, finish_arguments, settle, stop_outcome
from pyguard.base.ending.verdict import verdict

__all__ = [
    "Causes",
    "EndNotes",
    "Ending",
    "RunEnding",
    "Settled",
    "TokenTotals",
    "end_from_events",
    "finish_arguments",
    "footer",
    "settle",
    "stop_outcome",
    "token_totals",
    "tree_totals",
    "verdict",
]
