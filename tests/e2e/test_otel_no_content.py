"""A real guarded LangChain4j run (scripted model, JVM) exported without content capture holds no text of the task,
the model or the tools anywhere in the export: not in attributes, reasons, status messages or span events. The same
run with content capture carries every marker, so the search can fail."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")

from pyguard.base.events import Outcome  # noqa: E402
from pyguard.live.guard import Guard  # noqa: E402
from pyguard.otel import GuardTelemetry  # noqa: E402

MARK = "QZXV"
"""Every marker starts with this; nothing else in an export does (names, ids, rules, numbers)."""
TASK = f"Where is the parcel {MARK}-TASK-9902?"


def marked_scenario(recover: float) -> dict:
    """A tool that answers with a marked text, called with marked arguments until the guard reflects; a second
    tool that fails with a marked error; after the reflection the model answers quoting the last result."""
    return {
        "name": "marked",
        "toolset": "scenario",
        "tools": [
            {
                "name": "track",
                "description": "track a parcel",
                "parameters": {"ref": "string"},
                "results": [f"parcel {{arg:ref}} is at depot {MARK}-TOOL-OUT-7731"],
            },
            {
                "name": "carrier",
                "description": "ask the carrier",
                "parameters": {"ref": "string"},
                "throws": f"carrier refused {MARK}-ERR-5150",
            },
        ],
        "turns": [
            {"tool_calls": [{"name": "carrier", "arguments": {"ref": f"{MARK}-ARG-0001"}}]},
            {"tool_calls": [{"name": "track", "arguments": {"ref": f"{MARK}-ARG-4419"}}], "repeat": 12},
        ],
        "loop_from": 1,
        "on_reflection": {"recover_probability": recover, "answer": f"{MARK}-ANSWER: {{last_result}}"},
    }


def export_text(tmp_path, capture) -> tuple[str, list[Outcome]]:
    path = tmp_path / f"spans-{capture}.jsonl"
    telemetry = GuardTelemetry.to_file(path, capture_content=capture)
    guard = Guard(telemetry=telemetry)
    outcomes = [
        guard.run_scenario(marked_scenario(recover), TASK, seed=1, task_type="lookup").outcome for recover in (0.0, 1.0)
    ]
    telemetry.shutdown()
    return path.read_text(encoding="utf-8"), outcomes


def test_no_content_export_holds_no_task_model_or_tool_text(jvm, tmp_path):
    text, outcomes = export_text(tmp_path, "NO_CONTENT")
    assert outcomes == [Outcome.STALLED, Outcome.SUCCEEDED]  # a reflection and a stop, then a recovered run
    assert "pyguard.reflection" in text and "pyguard.stop" in text and "execute_tool" in text
    assert MARK not in text


def test_with_content_every_marker_is_there(jvm, tmp_path):
    text, _ = export_text(tmp_path, "SPAN_ONLY")
    for marker in ("TASK-9902", "TOOL-OUT-7731", "ARG-4419", "ARG-0001", "ERR-5150", "ANSWER"):
        assert f"{MARK}-{marker}" in text
