"""Import of recordings in the OpenAI chat-completions message format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyguard.base.errors import InputError, TraceFormatError
from pyguard.base.events import Outcome
from pyguard.loading import load_runs
from pyguard.trace import import_openai, parse_openai_runs

RECORDINGS = Path(__file__).parents[2] / "data" / "recordings"


def _call(cid: str | None, name: str, args: str = "{}") -> dict:
    call = {"type": "function", "function": {"name": name, "arguments": args}}
    if cid is not None:
        call["id"] = cid
    return call


def _tool(cid: str | None, content: str) -> dict:
    msg = {"role": "tool", "content": content}
    if cid is not None:
        msg["tool_call_id"] = cid
    return msg


def _one(run: dict):
    (record,) = parse_openai_runs([run])
    return record


def test_each_assistant_message_is_one_iteration_with_observations_before_it() -> None:
    rec = _one(
        {
            "id": "r1",
            "task_type": "lookup",
            "success": True,
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "find x"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [_call("a", "search", '{"q": "x"}')],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
                },
                _tool("a", "x is 4"),
                {"role": "user", "content": "hurry"},
                {"role": "assistant", "content": "x = 4", "usage": {"prompt_tokens": 20, "completion_tokens": 3}},
            ],
        }
    )
    assert rec.run_id == "r1" and rec.task_type == "lookup" and rec.start.task == "find x"
    first, second = rec.events
    assert (first.index, second.index) == (1, 2)
    assert [(o.kind, o.text) for o in first.observations] == [("system", "be brief"), ("user", "find x")]
    assert first.tool_calls[0].name == "search" and first.tool_calls[0].arguments == '{"q": "x"}'
    assert [(o.kind, o.tool_name, o.tool_call_id, o.text) for o in second.observations] == [
        ("tool", "search", "a", "x is 4"),
        ("user", None, None, "hurry"),
    ]
    assert second.total_tokens == 23  # total computed from prompt + completion when missing
    assert rec.end.outcome is Outcome.SUCCEEDED and rec.end.success_label is True
    assert rec.end.answer == "x = 4" and rec.end.total_tokens == 35 and rec.end.tool_calls == 1
    assert rec.end.censored is False


def test_tool_results_pair_by_id_even_out_of_order() -> None:
    rec = _one(
        {
            "messages": [
                {"role": "assistant", "tool_calls": [_call("a", "alpha"), _call("b", "beta")]},
                _tool("b", "from beta"),
                _tool("a", "from alpha"),
                {"role": "assistant", "content": "done"},
            ]
        }
    )
    assert [(o.tool_call_id, o.tool_name, o.text) for o in rec.events[1].observations] == [
        ("b", "beta", "from beta"),
        ("a", "alpha", "from alpha"),
    ]


def test_repeated_ids_pair_by_position() -> None:
    rec = _one(
        {
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [_call("call_0", "alpha"), _call("call_0", "beta"), _call("call_0", "gamma")],
                },
                _tool("call_0", "1"),
                _tool("call_0", "2"),
                _tool("call_0", "3"),
                {"role": "assistant", "content": "done"},
            ]
        }
    )
    assert [o.tool_name for o in rec.events[1].observations] == ["alpha", "beta", "gamma"]


def test_missing_ids_pair_by_position() -> None:
    rec = _one(
        {
            "messages": [
                {"role": "assistant", "tool_calls": [_call(None, "alpha"), _call(None, "beta")]},
                _tool(None, "1"),
                _tool(None, "2"),
                {"role": "assistant", "content": "done"},
            ]
        }
    )
    assert [(o.tool_name, o.text, o.tool_call_id) for o in rec.events[1].observations] == [
        ("alpha", "1", None),
        ("beta", "2", None),
    ]


def test_mixed_unique_and_missing_ids_pair_the_rest_by_position() -> None:
    rec = _one(
        {
            "messages": [
                {"role": "assistant", "tool_calls": [_call("a", "alpha"), _call("b", "beta"), _call("c", "gamma")]},
                _tool("c", "3"),
                _tool(None, "1"),
                _tool("zzz", "2"),
                {"role": "assistant", "content": "done"},
            ]
        }
    )
    assert [(o.tool_name, o.text) for o in rec.events[1].observations] == [
        ("gamma", "3"),
        ("alpha", "1"),
        ("beta", "2"),
    ]


def test_ids_reused_across_iterations_pair_within_their_iteration() -> None:
    rec = _one(
        {
            "messages": [
                {"role": "assistant", "tool_calls": [_call("call_0", "alpha")]},
                _tool("call_0", "1"),
                {"role": "assistant", "tool_calls": [_call("call_0", "beta")]},
                _tool("call_0", "2"),
                {"role": "assistant", "content": "done"},
            ]
        }
    )
    assert [e.observations[0].tool_name for e in rec.events[1:]] == ["alpha", "beta"]


@pytest.mark.parametrize(
    "labels, expected",
    [
        ({}, None),
        ({"success": True}, True),
        ({"success": False}, False),
        ({"reward": 1}, True),
        ({"reward": 1.0}, True),
        ({"reward": 0.5}, False),
        ({"reward": 0}, False),
        ({"resolved": True}, True),
        ({"resolved": False}, False),
        ({"success": True, "reward": 1}, True),
        ({"success": None}, None),
    ],
)
def test_outcome_labels(labels: dict, expected: bool | None) -> None:
    rec = _one({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], **labels})
    assert rec.end.success_label is expected
    assert rec.end.outcome is (Outcome.FAILED if expected is False else Outcome.SUCCEEDED)
    if expected is None:
        assert "no outcome label" in rec.end.reason


def test_missing_usage_gives_the_known_sum_marked_partial() -> None:
    rec = _one(
        {
            "messages": [
                {"role": "assistant", "tool_calls": [_call("a", "f")]},
                _tool("a", "r"),
                {"role": "assistant", "content": "ok", "usage": {"prompt_tokens": 5, "completion_tokens": 1}},
            ]
        }
    )
    assert rec.events[0].total_tokens is None and rec.events[0].input_tokens is None
    assert rec.events[1].total_tokens == 6
    assert rec.end.total_tokens == 6 and rec.end.tokens_partial  # the known sum, said to be a lower bound


def test_cut_off_run_is_censored_and_not_succeeded() -> None:
    rec = _one(
        {
            "id": 7,
            "success": False,
            "messages": [
                {"role": "assistant", "tool_calls": [_call("a", "f")]},
                _tool("a", "r"),
                {"role": "assistant", "tool_calls": [_call("b", "f")]},
                _tool("b", "r2"),
            ],
        }
    )
    assert rec.run_id == "7"
    assert rec.end.censored is True and rec.end.outcome is Outcome.EXPIRED and rec.end.answer is None
    assert rec.end.success_label is False
    assert rec.end.evidence["trailing_observations"] == 1  # counted, not silently dropped


def test_traj_key_and_content_parts() -> None:
    rec = _one(
        {
            "traj": [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}],
                },
                {"role": "assistant", "content": [{"type": "text", "text": "seen"}]},
            ]
        }
    )
    assert rec.events[0].observations[0].text == "look\n[image_url]"
    assert rec.events[0].text == "seen"


def test_dict_arguments_and_legacy_function_call() -> None:
    rec = _one(
        {
            "messages": [
                {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {"k": 1}}}]},
                _tool("a", "r"),
                {"role": "assistant", "function_call": {"name": "g", "arguments": "{}"}},
                {"role": "function", "name": "g", "content": "r2"},
                {"role": "assistant", "content": "done"},
            ]
        }
    )
    assert json.loads(rec.events[0].tool_calls[0].arguments) == {"k": 1}
    assert rec.events[1].tool_calls[0].name == "g"
    assert rec.events[2].observations[0].tool_name == "g"


@pytest.mark.parametrize(
    "run, needle",
    [
        ({"id": "x"}, "run #0 (id 'x'): has no 'messages'"),
        ({"messages": []}, "non-empty list"),
        ({"messages": [{"role": "user", "content": "q"}]}, "no assistant message"),
        ({"messages": [{"role": "robot", "content": "q"}]}, "message 0 (role 'robot') has an unknown role"),
        ({"messages": ["hi"]}, "message 0 is a str"),
        ({"messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]}, "function.name"),
        (
            {"messages": [{"role": "assistant", "content": "a", "usage": {"total_tokens": "many"}}]},
            "usage.total_tokens",
        ),
        ({"success": "yes", "messages": [{"role": "assistant", "content": "a"}]}, "'success' must be true or false"),
        ({"reward": "1", "messages": [{"role": "assistant", "content": "a"}]}, "'reward' must be a finite number"),
        ({"success": True, "resolved": False, "messages": [{"role": "assistant", "content": "a"}]}, "disagree"),
        ({"messages": [], "traj": []}, "both"),
        ({"type": "run_start", "run_id": "a"}, "format='pyguard'"),
        ({"id": ["a"], "messages": [{"role": "assistant", "content": "a"}]}, "'id' must be"),
        ([1], "not a run object"),
    ],
)
def test_bad_runs_raise_input_error_naming_the_run(run: object, needle: str) -> None:
    with pytest.raises(InputError, match="run #0") as info:
        parse_openai_runs([run], source="rec.jsonl")
    assert needle in str(info.value)
    assert str(info.value).startswith("rec.jsonl: ")


def test_duplicate_ids_are_rejected() -> None:
    run = {"id": "same", "messages": [{"role": "assistant", "content": "a"}]}
    with pytest.raises(InputError, match="runs #0 and #1 share the id 'same'"):
        parse_openai_runs([run, run])


def test_json_array_and_jsonl_give_the_same_runs(tmp_path: Path) -> None:
    lines = (RECORDINGS / "openai_runs.jsonl").read_text().splitlines()
    objects = [json.loads(line) for line in lines]
    as_array = tmp_path / "openai_runs.json"
    as_array.write_text(json.dumps(objects, indent=2))
    jsonl = import_openai(RECORDINGS / "openai_runs.jsonl")
    array = import_openai(as_array)

    def strip(records):  # evidence names the source file, which differs
        return [r.model_copy(update={"end": r.end.model_copy(update={"evidence": {}})}) for r in records]

    assert strip(jsonl) == strip(array)
    assert array[2].end.evidence == {
        "imported_from": "openai",
        "source": str(as_array),
        "index": 2,
        "cut_off": "recording_ends",
    }
    assert len(jsonl) == len(lines) == 4
    assert [r.run_id for r in jsonl] == ["lookup-ok", "loop-fail", "cutoff", "openai_runs[3]"]
    single = tmp_path / "one.json"
    single.write_text(json.dumps(objects[0], indent=2))  # one pretty-printed run object
    assert strip(import_openai(single)) == strip(jsonl[:1])


def test_malformed_jsonl_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    good = json.dumps({"messages": [{"role": "assistant", "content": "a"}]})
    path.write_text("\n".join([good, good, '{"messages": [', good]) + "\n")
    with pytest.raises(TraceFormatError) as info:
        import_openai(path)
    assert info.value.line == 3


def test_example_recording_loads_through_load_runs() -> None:
    runs = {r.run_id: r for r in load_runs(RECORDINGS / "openai_runs.jsonl")}
    assert runs["cutoff"].end.censored and runs["cutoff"].end.total_tokens is None
    assert runs["loop-fail"].end.success_label is False and len(runs["loop-fail"].events) == 8
    assert runs["lookup-ok"].end.success_label is True
    unlabeled = runs["openai_runs[3]"]
    assert unlabeled.end.success_label is None
    assert [o.tool_name for o in unlabeled.events[1].observations] == ["track_shipment", "track_shipment"]
    assert unlabeled.events[2].observations[0].kind == "user"
