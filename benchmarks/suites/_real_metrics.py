"""Scoring a stopping policy on recorded runs, as docs/../shared real-runs-metrics defines it; and the two peers.

Definitions (the same for pyguard and the peers, so the figures compare):

- iteration = one model call (one recorded IterationEvent); ``stop_at = i``: the guard stops after iteration i:
  the run made i model calls and ran the tools they asked for, iterations i+1.. never happen (the stop replaces
  model call i+1); None = never stops; *early* when ``i < n``.
- false stop: a run labelled successful, stopped early. For ``kind = "artifact"`` sources (coding agents whose
  result is the repository) a stop at or after the last iteration that changed the artifact (``stop_at >=``
  :func:`last_artifact_change`: that iteration's edit ran) keeps the result and is not a false stop; a stop
  before it is.
- failed-run tool calls saved: over runs labelled failed, the tool calls requested in iterations after stop_at,
  divided by all the tool calls those runs requested.
- capped runs stopped before the cap: over runs the recording marks as cut off by the agent's own limit
  (``RunEnd.censored``), the share stopped early.
- reflections count as "continue" (pyguard.replay already does so).
- every figure comes with its 95% Wilson interval (``*_interval``: ``[low, high]``, None without a denominator):
  false stops over successful runs, stopped capped runs over capped runs, and saved calls over failed runs' calls
  (calls of one run are not independent: that interval is narrower than the truth; read it as a lower bound on
  the uncertainty). ``small`` lists the kinds of run (``successful``, ``failed``, ``capped``) a source has fewer
  than 30 of: its figure on them is a small-sample one.

Peers, computed on the same runs:

- ``repeat``: stop at the first exact (tool name, arguments string) repeat: at iteration i when one of its
  calls equals any earlier call of the run (CrewAI / gemini-cli style).
- ``openhands``: the OpenHands-style stuck detector. An *action* is the tuple of an iteration's calls, its
  *observation* the tuple of the tool results that answer it (they arrive with the next iteration). Checked at
  every iteration j on the history since the last user message (a ``kind="user"`` observation after the first
  iteration starts a new window): (1) the last 4 complete (action, observation) pairs identical; (2) the last 3
  actions identical and all their results errors; (3) 3 agent messages in a row without actions (iterations
  with no tool call, j included); (4) the last 6 pairs alternating A, B, A, B, A, B. Complete pairs at
  iteration j are those of iterations before j (their results are j's observations), so a detector fires at
  the first iteration whose observations complete the pattern; ``stop_at = j``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence

from pyguard.base.events import IterationEvent, RunRecord

__all__ = ["SMALL", "repeat_stop", "openhands_stop", "last_artifact_change", "changes_artifact", "score", "wilson"]


# ---------------------------------------------------------------- peers


def repeat_stop(events: Sequence[IterationEvent]) -> int | None:
    """The first iteration that requests a (tool, arguments) pair requested before; None if none does."""
    seen: set[tuple[str, str]] = set()
    for event in events:
        for call in event.tool_calls:
            key = (call.name, call.arguments)
            if key in seen:
                return event.index
            seen.add(key)
    return None


def _action(event: IterationEvent) -> tuple:
    return tuple((c.name, c.arguments) for c in event.tool_calls)


def openhands_stop(events: Sequence[IterationEvent]) -> int | None:
    """The iteration at which the OpenHands-style stuck detector fires (see the module docstring)."""
    window_start = 0  # index (0-based) of the first event of the current window
    for j, event in enumerate(events):
        if j > 0 and any(o.kind == "user" for o in event.observations):
            window_start = j
        # complete pairs: events window_start..j-1, each with the results that arrived at the next event
        pairs = []
        for k in range(window_start, j):
            results = tuple(o for o in events[k + 1].observations if o.kind == "tool")
            pairs.append(
                (_action(events[k]), tuple(o.text for o in results), bool(results) and all(o.is_error for o in results))
            )
        acting = [p for p in pairs if p[0]]
        if len(acting) >= 4 and len(pairs) >= 4:
            last4 = pairs[-4:]
            if all(p[0] for p in last4) and all(p[:2] == last4[0][:2] for p in last4):
                return event.index
        if len(pairs) >= 3:
            last3 = pairs[-3:]
            if last3[0][0] and all(p[0] == last3[0][0] for p in last3) and all(p[2] for p in last3):
                return event.index
        if j - window_start >= 2 and all(not events[k].tool_calls for k in range(j - 2, j + 1)):
            return event.index
        if len(pairs) >= 6:
            last6 = [p[:2] for p in pairs[-6:]]
            a, b = last6[0], last6[1]
            if a[0] and b[0] and a != b and last6 == [a, b, a, b, a, b]:
                return event.index
    return None


# ---------------------------------------------------------------- artifact changes

# tools whose call changes files, by name; str_replace_editor-like tools change files unless the command is a view
_WRITING_TOOLS = frozenset(
    {
        "edit",
        "create",
        "insert",
        "append",
        "str_replace",
        "undo_edit",
        "write_file",
        "write",
        "apply_patch",
        "replace_in_file",
        "edit_file",
        "create_file",
        "delete_file",
        "patch",
        "rename_file",
        "move_file",
    }
)
_EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "file_editor", "editor"})
_SHELL_TOOLS = frozenset({"bash", "shell", "execute_bash", "run", "terminal", "cmd", "execute_command", "sh"})
# shell commands that change files whatever their arguments
_WRITING_COMMANDS = frozenset(
    {
        "mv",
        "cp",
        "rm",
        "touch",
        "mkdir",
        "rmdir",
        "patch",
        "truncate",
        "ln",
        "tee",
        "install",
        "rsync",
        "unzip",
        "tar",
        "dd",
    }
)
_GIT_WRITES = frozenset(
    {
        "apply",
        "checkout",
        "restore",
        "reset",
        "stash",
        "am",
        "revert",
        "cherry-pick",
        "merge",
        "rebase",
        "rm",
        "mv",
        "clean",
        "pull",
    }
)
_REDIRECT = re.compile(r"(?<![0-9&<>])>>?\s*(?!&)([^\s;&|<>()]+)")
_INPLACE = re.compile(r"(?:^|[\s;&|(])(?:sed|perl)\s+(?:-[a-zA-Z]*\s+)*-[a-zA-Z]*i")
_PY_WRITE = re.compile(
    r"""open\([^)]*['"](?:w|a|wb|ab|w\+|r\+)['"]|\.write_text\(|\.write_bytes\(|shutil\.(?:copy|move|rmtree)|os\.(?:remove|rename|unlink)"""
)
_SEGMENT = re.compile(r"&&|\|\||;|\||\n")


def _targets_scratch(target: str) -> bool:
    return target.startswith(("/dev/", "/tmp/", "/proc/")) or target in ("/dev/null",)


def _command_writes(command: str) -> bool:
    """Does a shell command (possibly several joined with && ; | or newlines) change files? A heuristic:
    output redirection to a file (not /dev/null, /tmp, 2>&1), sed/perl -i, a here-document written to a file,
    python writing files, and commands that create, move or delete files (mv, cp, rm, touch, mkdir, patch,
    tee, git apply/checkout/restore/stash/..., pip/npm installs are not counted)."""
    body = command
    for m in _REDIRECT.finditer(body):
        if not _targets_scratch(m.group(1)):
            return True
    if _INPLACE.search(body) or _PY_WRITE.search(body):
        return True
    for segment in _SEGMENT.split(body):
        segment = segment.strip().lstrip("(").strip()
        if not segment:
            continue
        try:
            words = shlex.split(segment, posix=True)
        except ValueError:
            words = segment.split()
        while words and ("=" in words[0] and not words[0].startswith("-") or words[0] in ("sudo", "cd", "env", "time")):
            if words[0] == "cd":
                words = []
                break
            words = words[1:]
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        if head in _WRITING_COMMANDS and not (
            head in ("mkdir",) and all(_targets_scratch(w) for w in words[1:] if not w.startswith("-"))
        ):
            if not all(_targets_scratch(w) for w in words[1:] if not w.startswith("-")):
                return True
        if head == "git" and len(words) > 1 and words[1] in _GIT_WRITES:
            return True
    return False


def changes_artifact(name: str, arguments: str) -> bool:
    """Does one tool call change the artifact (the agent's working files)? See :func:`_command_writes`."""
    tool = name.lower()
    try:
        args = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        args = {}
    if tool in _WRITING_TOOLS:
        return True
    if tool in _EDITOR_TOOLS:
        text = arguments if not isinstance(args, dict) else " ".join(str(v) for v in args.values())
        command = args.get("command") if isinstance(args, dict) else None
        if isinstance(command, str):
            return command not in ("view",)
        return not text.strip().startswith("view")
    if tool in _SHELL_TOOLS or isinstance(args, dict) and isinstance(args.get("command"), str):
        command = args.get("command") if isinstance(args, dict) and isinstance(args.get("command"), str) else arguments
        return _command_writes(command)
    return False


_SCRIPT_WRITE = re.compile(r"""(?:cat|tee)\s+(?:<<-?\s*['"]?\w+['"]?\s*>\s*|>\s*)([\w./-]+\.py)\b""")
_SCRIPT_RUN = re.compile(r"(?:^|[\s;&|])python[\d.]*\s+(?:-\w+\s+)*([\w./-]+\.py)\b")


def _command(name: str, arguments: str) -> str | None:
    try:
        args = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        return None
    return args.get("command") if isinstance(args, dict) and isinstance(args.get("command"), str) else None


def last_artifact_change(record: RunRecord) -> int:
    """The last iteration whose tool calls changed the artifact (0 when none did).

    Besides :func:`changes_artifact`, running a Python script that the run itself wrote earlier counts as a
    change when that script writes files (``python apply_fix.py`` after ``cat <<'EOF' > apply_fix.py`` with an
    ``open(..., 'w')`` inside): coding agents often patch files that way.
    """
    last = 0
    writers: set[str] = set()
    for event in record.events:
        changed = False
        for c in event.tool_calls:
            changed = changed or changes_artifact(c.name, c.arguments)
            command = _command(c.name, c.arguments)
            if command is None:
                continue
            for m in _SCRIPT_WRITE.finditer(command):
                if _PY_WRITE.search(command):
                    writers.add(m.group(1).rsplit("/", 1)[-1])
            for m in _SCRIPT_RUN.finditer(command):
                if m.group(1).rsplit("/", 1)[-1] in writers:
                    changed = True
        if changed:
            last = event.index
    return last


# ---------------------------------------------------------------- scoring


SMALL = 30
"""A source with fewer runs of a kind (successful, failed, capped) than this has a small-sample figure on them."""


def _share(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


def wilson(k: int, n: int) -> list[float] | None:
    """The 95% Wilson score interval of ``k`` of ``n`` as ``[low, high]`` (scipy's); None when ``n`` is 0."""
    if n == 0:
        return None
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [float(ci.low), float(ci.high)]


def small_kinds(rows: list[dict]) -> list[str]:
    """The kinds of run a source has fewer than :data:`SMALL` of (a kind it has none of is not listed: it has no
    figure at all)."""
    counts = {
        "successful": sum(r["label"] is True for r in rows),
        "failed": sum(r["label"] is False for r in rows),
        "capped": sum(bool(r["capped"]) for r in rows),
    }
    return [kind for kind, n in counts.items() if 0 < n < SMALL]


def score(rows: list[dict], *, artifact: bool, examples: int = 8) -> dict:
    """The three figures (and their counts) for one policy over one source's rows.

    A row: ``{"id", "n", "label", "capped", "calls": [calls per iteration], "last_edit", "stop_at", "rule",
    "reason"}``.
    """
    ok = [r for r in rows if r["label"] is True]
    bad = [r for r in rows if r["label"] is False]
    capped = [r for r in rows if r["capped"]]

    def early(r: dict) -> bool:
        return r["stop_at"] is not None and r["stop_at"] < r["n"]

    def false_stop(r: dict) -> bool:
        if not early(r):
            return False
        return r["stop_at"] < r["last_edit"] if artifact else True

    false = [r for r in ok if false_stop(r)]
    total_calls = sum(sum(r["calls"]) for r in bad)
    saved = sum(sum(r["calls"][r["stop_at"] :]) for r in bad if r["stop_at"] is not None)
    rules: dict[str, int] = {}
    for r in false:
        key = r["rule"] or "stop"
        rules[key] = rules.get(key, 0) + 1
    capped_stopped = sum(early(r) for r in capped)
    return {
        "false_stop_rate": _share(len(false), len(ok)),
        "false_stop_interval": wilson(len(false), len(ok)),
        "false_stops": len(false),
        "successful_stopped_early": sum(early(r) for r in ok),
        "failed_calls_saved": _share(saved, total_calls),
        "failed_calls_saved_interval": wilson(saved, total_calls),
        "failed_calls": total_calls,
        "failed_calls_saved_count": saved,
        "capped_stopped": _share(capped_stopped, len(capped)),
        "capped_stopped_interval": wilson(capped_stopped, len(capped)),
        "capped_stopped_count": capped_stopped,
        "false_stop_rules": dict(sorted(rules.items(), key=lambda kv: -kv[1])),
        "false_stop_examples": [
            {
                "id": r["id"],
                "stop_at": r["stop_at"],
                "iterations": r["n"],
                "last_edit": r["last_edit"] if artifact else None,
                "rule": r["rule"],
                "reason": (r["reason"] or "")[:300],
            }
            for r in _spread(false, examples)
        ],
    }


def _spread(rows: list[dict], n: int) -> list[dict]:
    """Up to ``n`` rows, taking each rule in turn (most frequent first) so that every rule gets examples."""
    by_rule: dict[str, list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["id"]):
        by_rule.setdefault(r["rule"] or "stop", []).append(r)
    queues = sorted(by_rule.values(), key=len, reverse=True)
    out: list[dict] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop(0))
    return out
