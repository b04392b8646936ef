"""Import AgentBench MedAgentBench outputs (``outputs/<run>/<model>/medagentbench-std/{overall.json,runs.jsonl}``).

A MedAgentBench agent answers a clinical question against a FHIR server with *text* actions, one per model call:
``GET <url>``, ``POST <url>`` followed by a JSON payload on the next lines, or ``FINISH([answers])``. A sample
(``{"index", "status", "result", "history"}``) keeps the conversation as ``history``: the task prompt (role
``user``), then the agent's messages (role ``agent``) each answered by the harness (role ``user``: the GET
response, "POST request accepted ...", or an error). Two files hold samples:

- ``runs.jsonl``: one line per sample, ``{"index", "error", "info", "output": sample, "time"}``; its status is
  ``completed`` (not yet evaluated), ``agent invalid action`` (the agent wrote something that is no action: the run
  ends there), ``task limit reached`` (the harness's ``max_round`` model calls used up), ...;
- ``overall.json``: ``{"total", "validation", "custom": {"accuracy", "raw_results": [sample, ...]}}``, the same
  samples after evaluation, a completed one's status being ``completedCorrect`` or ``completedIncorrect``.

Each agent message is one iteration: a GET or POST is one tool call named ``GET``/``POST`` (arguments
``{"url"}``, plus ``{"payload"}`` for a POST); ``FINISH(...)`` a call of the terminal tool ``FINISH`` (arguments
``{"answer"}``); any other text an answer with no tool call (the ``tool_code`` fences Gemini adds are removed first,
as the harness does). The harness's reply is the next iteration's tool observation (an error when it says the
request failed or the POST was invalid).

Labels: ``completedCorrect`` is a success; ``completedIncorrect``, an invalid action, a task error, a context limit
and ``task limit reached`` are failures (the last also *censored*, ``cut_off="step_limit"``); a bare ``completed``
(runs.jsonl, not evaluated) is unlabelled unless ``labels=`` names the run. Run ids are ``<model>/<index>``, the
model being the folder above the task folder (AgentBench's layout), else the file's name.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

from pyguard.base.errors import UnreadableRecord
from pyguard.base.events import IterationEvent, Observation, RunRecord, RunStart, ToolCall
from pyguard.trace.ending import build_end
from pyguard.trace.labels import Labels
from pyguard.trace.run_parser import RunParser

__all__: list[str] = []

_FAILED = ("Incorrect", "agent invalid action", "agent validation failed", "task error", "agent context limit")
_LIMIT = "task limit reached"
_ERRORS = ("Error in sending the GET request", "Invalid POST request")


def _is_sample(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("history"), list) and "status" in obj and "index" in obj


def is_medagent_run(obj: Any) -> bool:
    """A MedAgentBench sample, a runs.jsonl line holding one, or an overall.json with evaluated samples."""
    if not isinstance(obj, dict):
        return False
    custom = obj.get("custom")
    return (
        _is_sample(obj)
        or ("output" in obj and "index" in obj and _is_sample(obj.get("output")))
        or (isinstance(custom, dict) and isinstance(custom.get("raw_results"), list) and "validation" in obj)
    )


def _label(status: str) -> bool | None:
    if status.endswith("Correct") and not status.endswith("Incorrect"):
        return True
    if status == _LIMIT or any(status.endswith(s) or status == s for s in _FAILED):
        return False
    return None


def _action(text: str, run_id: str, index: int) -> tuple[ToolCall, ...]:
    r = text.strip().replace("```tool_code", "").replace("```", "").strip()
    cid = f"{run_id}-{index}"
    if r.startswith("GET"):
        return (ToolCall(id=cid, name="GET", arguments=json.dumps({"url": r[3:].strip()}, ensure_ascii=False)),)
    if r.startswith("POST"):
        head, _, payload = r[4:].strip().partition("\n")
        args = {"url": head.strip(), "payload": payload.strip()}
        return (ToolCall(id=cid, name="POST", arguments=json.dumps(args, ensure_ascii=False)),)
    if r.startswith("FINISH("):
        answer = r[len("FINISH(") : -1] if r.endswith(")") else r[len("FINISH(") :]
        return (ToolCall(id=cid, name="FINISH", arguments=json.dumps({"answer": answer}, ensure_ascii=False)),)
    return ()


def _prefix(source: str) -> str:
    p = PurePath(source)
    return p.parent.parent.name if p.parent.name.startswith("medagentbench") and p.parent.parent.name else p.stem


def medagent_to_record(
    sample: Any, *, source: str, labels: Labels | None, terminal_tools: frozenset[str] | None
) -> RunRecord:
    index = sample.get("index") if isinstance(sample, dict) else None
    run_id = f"{_prefix(source)}/{index}"

    def fail(message: str, reason: str) -> UnreadableRecord:
        return UnreadableRecord(f"{source}: sample {run_id!r}: {message}", reason=reason)

    if not _is_sample(sample) or isinstance(index, bool) or not isinstance(index, (int, str)):
        raise fail("is not a MedAgentBench sample (index, status, history)", "record that is not a run object")
    status = str(sample["status"])
    events: list[IterationEvent] = []
    pending: list[Observation] = []
    task: str | None = None
    for j, msg in enumerate(sample["history"]):
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), str):
            raise fail(f"message {j} is not an object with a text 'content'", "unreadable message")
        role, content = msg.get("role"), msg["content"]
        if role == "agent":
            calls = _action(content, run_id, len(events) + 1)
            events.append(
                IterationEvent(
                    run_id=run_id,
                    index=len(events) + 1,
                    tool_calls=calls,
                    observations=tuple(pending),
                    text=None if calls else content,
                )
            )
            pending = []
        elif role == "user":
            if not events:
                task = content if task is None else task
                pending.append(Observation(kind="user", text=content))
                continue
            call = events[-1].tool_calls[0] if events[-1].tool_calls else None
            pending.append(
                Observation(
                    kind="tool" if call is not None else "user",
                    tool_call_id=call.id if call else None,
                    tool_name=call.name if call else None,
                    text=content,
                    is_error=content.startswith(_ERRORS),
                )
            )
        else:
            raise fail(f"message {j} has the role {role!r}", f"message with unknown role {role!r}")
    if not events:
        raise fail("has no agent message: there is no model call to import", "run with no assistant message")
    named = labels.label(run_id) if labels is not None else None
    label = named if named is not None else _label(status)
    cut_off = "step_limit" if status == _LIMIT else None
    end = build_end(
        run_id,
        events,
        label=label,
        imported_from="medagent",
        source=source,
        terminal_tools=terminal_tools,
        finished=cut_off is None,
        cut_off=cut_off,
        evidence={"status": status},
    )
    question = task.rsplit("\nContext:", 1)[-1].strip() if task else None
    return RunRecord(start=RunStart(run_id=run_id, task=question), events=events, end=end)


def _samples(obj: Any) -> list[Any]:
    if isinstance(obj, dict) and isinstance(obj.get("custom"), dict) and "validation" in obj:
        return list(obj["custom"].get("raw_results") or [])
    if isinstance(obj, dict) and "output" in obj and not _is_sample(obj):
        return [obj["output"]]
    return [obj]


parse_medagent = RunParser(medagent_to_record, runs_of=_samples)
"""Every sample in the parsed objects (runs.jsonl lines, or an overall.json) as a run; unreadable ones skipped and
counted in ``log`` (strict when None: the first raises). A run id seen twice is the loader's to skip."""
