"""Waiting: which actions wait (a tool that sleeps or waits, by name, argument or ``[tools] wait_tools``) and which
results say "not yet" (a pending status). Identical reads with a wait between them, or identical reads that say
"pending", are polls, not a loop (:mod:`pyguard.engine.stall`): they wait within the polling allowance. A read whose
result changed only in volatile fields (a timestamp, a request id) is a poll when it re-samples one thing; when it takes
turns with other reads that came back unchanged too (A, B, A, B: :func:`takes_turns`), the run is going round a
cycle, and the volatile fields are no sign of waiting. A poll that nothing marks as one (no wait before it, no
"pending" in it: only its stamps changed) earns one reflection per run at its :data:`UNMARKED_POLLS`-th re-sample
(``unmarked_poll``: :func:`unmarked_poll_hit`), never a stop by itself: the agent that waits for a change is asked to
wait between its reads or say so, the agent that re-reads a final state is told so; the polling allowance still
bounds both.

Tool descriptions do not reach the engine (events carry names and arguments); a tool whose description says it
waits but whose name does not is named in ``[tools] wait_tools``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from functools import lru_cache

from pyguard.base.decisions import Action
from pyguard.engine.actions import name_words
from pyguard.engine.conditions import StopHit
from pyguard.engine.fingerprint import ActionFingerprint
from pyguard.engine.stall_report import action_hit
from pyguard.engine.steps import ActionResult
from pyguard.engine.tool_json import tool_json

__all__: list[str] = []

WAIT_WORDS = frozenset({"sleep", "wait", "waits", "waiting", "delay", "pause", "backoff", "await"})
"""Words of a tool name that make it a wait (``sleep``, ``wait_for_job``, ``time.sleep``, ``pause_seconds``)."""
_WAIT_KEYS = re.compile(
    r"^(?:wait|sleep|delay|pause|backoff|poll_interval|timeout)(?:_?(?:s|ms|sec|secs|seconds))?$", re.I
)
"""An argument that asks the tool itself to wait (``wait_seconds``, ``timeout``, ``delay_ms``)."""
_SHELL_WAIT = re.compile(r"(?:^|[;&|(]\s*|\bthen\s+|\bdo\s+)(?:sleep|wait|timeout)\s+\d")
"""A shell command that sleeps or waits a number of seconds (``sleep 5``, ``cmd; sleep 2``, ``timeout 30 ...``)."""
_PENDING = re.compile(
    r"\b(?:pending|queued|in[ _-]progress|running|processing|not (?:yet )?ready|not (?:yet )?(?:finished|complete|done)"
    r"|still (?:running|working|processing|waiting)|scheduled|starting|initiali[sz]ing|try again later)\b",
    re.I,
)
UNMARKED_POLLS = 2
"""Re-samples in a row of one read, changed only in volatile fields with no wait and no "pending", at which the run
gets its one ``unmarked_poll`` reflection (the third identical read)."""
_PENDING_MAX_CHARS = 400
"""Longest result (prepared text) read as a status: a long text that mentions "running" is content, not a status."""


def _positive_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def is_wait(tool: str, arguments: str, wait_tools: Collection[str] = ()) -> bool:
    """True when the call waits: named in ``wait_tools``; a name of wait words (``sleep``, ``wait_for``); a
    positive waiting argument (``{"wait_seconds": 10}``); or a shell command that sleeps (``sleep 5``)."""
    return tool in wait_tools or _waits_by_itself(tool, arguments)


@lru_cache(maxsize=8192)
def _waits_by_itself(tool: str, arguments: str) -> bool:
    """:func:`is_wait` without ``wait_tools`` (cached: a run repeats its calls, a replay or a tune search its runs)."""
    if any(w in WAIT_WORDS for w in name_words(tool)):
        return True
    text = arguments.strip()
    if not text.startswith("{"):
        return bool(_SHELL_WAIT.search(text))
    obj = tool_json(text)
    if not isinstance(obj, dict):  # NOT_JSON too
        return False
    for key, value in obj.items():
        if _WAIT_KEYS.match(str(key)) and _positive_number(value):
            return True
        if isinstance(value, str) and key in ("command", "cmd", "script") and _SHELL_WAIT.search(value):
            return True
    return False


def is_pending_result(prepared: str) -> bool:
    """True when a short result (its prepared text) reports a state that is not final yet: pending, queued, in
    progress, running, not ready, try again later. An identical repeat of such a result is a poll."""
    return len(prepared) <= _PENDING_MAX_CHARS and _PENDING.search(prepared) is not None


def takes_turns(
    history: Iterable[tuple[int, ActionFingerprint]],
    repeats: Collection[tuple[int, str]],
    action: ActionFingerprint | None,
    since: int | None,
    at: int | None,
) -> bool:
    """True when ``action``, requested at iterations ``since`` and ``at``, took turns with other actions: some were
    requested in the iterations between (``history``: (iteration, action) in order), and every one of them repeated
    an earlier action (``repeats``: (iteration, exact id)). A read re-sampled in a row (a poll) does not take turns;
    nor does one with a new action between (other work)."""
    if action is None or since is None or at is None:
        return False
    between = [
        (it, b.exact_id)
        for it, b in history
        if since < it < at and b.exact_id != action.exact_id and b.norm_id != action.norm_id
    ]
    return bool(between) and all(k in repeats for k in between)


def unmarked_poll_hit(iteration: int, r: ActionResult, polls: int) -> StopHit:
    """``unmarked_poll``: ``r``'s read was re-sampled ``polls`` times in a row and only its timestamps and ids changed,
    with nothing saying it waits (a reflection, never a stop by itself)."""
    a = r.action
    assert a is not None
    return action_hit(
        "unmarked_poll",
        iteration,
        r,
        f"{a.short(80)} was read {polls + 1} times in a row and only its timestamps and ids changed; nothing says it "
        "is still pending, and no wait came between the reads. If you are waiting for it to change, wait between "
        "reads; if it is final, use it.",
        {"polls": polls},
        action=Action.REFLECT,
    )
