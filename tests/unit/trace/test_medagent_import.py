"""The MedAgentBench importer on committed AgentBench outputs (tests/data/real/medagentbench), and on messy copies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyguard.base.errors import TraceFormatError, UnreadableRecord
from pyguard.loading import detect_format, load_runs
from pyguard.trace.medagent_import import is_medagent_run, parse_medagent

FIXTURE = Path(__file__).parents[2] / "data" / "real" / "medagentbench" / "outputs" / "Jan17v1"
OVERALL = FIXTURE / "llama-3.3" / "medagentbench-std" / "overall.json"
RUNS = FIXTURE / "gpt-4o-mini" / "medagentbench-std" / "runs.jsonl"


def _runs(*paths: Path | str, **kw) -> dict:
    return {r.run_id: r for r in load_runs([str(p) for p in paths], terminal_tools=["FINISH"], **kw)}


def test_both_files_are_detected_as_medagent() -> None:
    assert detect_format(OVERALL) == "medagent"
    assert detect_format(RUNS) == "medagent"


def test_overall_json_samples_become_labelled_runs_named_by_model_and_index() -> None:
    runs = _runs(OVERALL)
    assert sorted(runs) == ["llama-3.3/77", "llama-3.3/89", "llama-3.3/94", "llama-3.3/98", "llama-3.3/99"]
    assert runs["llama-3.3/89"].end.success_label is True
    assert {runs[i].end.success_label for i in ("llama-3.3/94", "llama-3.3/99", "llama-3.3/98")} == {False}
    assert not any(r.end.censored for r in runs.values())  # max_round 8 never reached here


def test_text_actions_become_get_post_and_finish_calls() -> None:
    run = _runs(OVERALL)["llama-3.3/94"]
    names = [[c.name for c in e.tool_calls] for e in run.events]
    assert names == [["GET"], ["GET"], ["POST"], ["FINISH"]]
    first, second = (json.loads(e.tool_calls[0].arguments) for e in run.events[:2])
    assert first["url"] == "http://34.170.56.151:8080/fhir/Observation?code=A1C&patient=S0547588"
    assert second["url"] == first["url"] + "&_sort=-effective&_count=1"  # the same search, refined
    post = json.loads(run.events[2].tool_calls[0].arguments)
    assert (
        post["url"].endswith("/fhir/ServiceRequest") and json.loads(post["payload"])["resourceType"] == "ServiceRequest"
    )
    assert json.loads(run.events[3].tool_calls[0].arguments) == {"answer": '[6.6, "2023-11-04T14:54:00+00:00"]'}
    assert run.end.evidence["ended_by_tool"] == "FINISH" and run.end.evidence["status"] == "completedIncorrect"
    # the task prompt is the first observation; each harness reply is the tool result of the call before it
    assert run.events[0].observations[0].kind == "user"
    reply = run.events[1].observations[0]
    assert reply.kind == "tool" and reply.tool_name == "GET" and reply.tool_call_id == run.events[0].tool_calls[0].id
    assert reply.text.startswith("Here is the response from the GET request:")
    assert run.start.task is not None and run.start.task.startswith("It's 2023-11-13") and "Question:" in run.start.task


def test_an_invalid_action_is_an_answer_without_a_call_and_a_failure() -> None:
    runs = _runs(OVERALL)
    prose = runs["llama-3.3/98"]
    assert prose.events[-1].tool_calls == () and prose.events[-1].text.startswith("The last HbA1C value")
    assert prose.end.success_label is False and not prose.end.censored
    brackets = runs["llama-3.3/77"]  # FINISH[...] is not the FINISH(...) action the harness accepts
    assert brackets.events[-1].tool_calls == () and brackets.events[-1].text.startswith("FINISH[")


def test_unevaluated_runs_jsonl_lines_are_unlabelled_unless_labels_name_them() -> None:
    runs = _runs(RUNS)
    assert sorted(runs) == ["gpt-4o-mini/14", "gpt-4o-mini/49", "gpt-4o-mini/58"]
    assert {r.end.success_label for r in runs.values()} == {None}
    labelled = _runs(RUNS, labels={"gpt-4o-mini/58": True, "gpt-4o-mini/49": False})
    assert labelled["gpt-4o-mini/58"].end.success_label is True
    assert labelled["gpt-4o-mini/49"].end.success_label is False


def test_messy_lines_are_counted_and_skipped(tmp_path: Path) -> None:
    lines = RUNS.read_text(encoding="utf-8").splitlines()
    bad_role = json.loads(lines[1])
    bad_role["output"]["history"][1]["role"] = "tool"
    no_agent = json.loads(lines[2])
    no_agent["output"]["index"] = 1000
    no_agent["output"]["history"] = no_agent["output"]["history"][:1]
    messy = tmp_path / "gpt-4o-mini" / "medagentbench-std" / "runs.jsonl"
    messy.parent.mkdir(parents=True)
    messy.write_text(
        "\n".join([lines[0], "not json {", json.dumps(bad_role), json.dumps(no_agent), lines[0], lines[2][:500]]),
        encoding="utf-8",
    )
    loaded = load_runs(messy, terminal_tools=["FINISH"])
    assert [r.run_id for r in loaded] == ["gpt-4o-mini/58"]
    assert loaded.skipped == {
        "line that is not JSON": 1,
        "message with unknown role 'tool'": 1,
        "run with no assistant message": 1,
        "duplicate run id": 1,
        "torn last line (writer cut off mid-write)": 1,
    }
    with pytest.raises(TraceFormatError, match=r"runs\.jsonl:2: not valid JSON"):
        load_runs(messy, terminal_tools=["FINISH"], strict=True)
    messy.write_text("\n".join([lines[0], json.dumps(bad_role)]), encoding="utf-8")
    with pytest.raises(UnreadableRecord, match="role 'tool'"):
        load_runs(messy, terminal_tools=["FINISH"], strict=True)


def test_a_task_limit_is_a_censored_failure() -> None:
    sample = json.loads(OVERALL.read_text(encoding="utf-8"))["custom"]["raw_results"][0]
    sample = {**sample, "status": "task limit reached", "history": sample["history"][:4]}
    (record,) = parse_medagent([(None, sample)], source="x/m/medagentbench-std/runs.jsonl")
    assert record.run_id == "m/99" and record.end.censored and record.end.success_label is False
    assert record.end.evidence["cut_off"] == "step_limit"


def test_other_formats_runs_are_not_taken_for_medagent() -> None:
    assert not is_medagent_run({"messages": [], "id": 1})
    assert not is_medagent_run({"index": 1, "status": "completed"})  # no history
    assert not is_medagent_run([{"history": []}])
