"""The TextWorld game-record importer on hand-written records (tests/unit/trace/textworld, see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyguard.base.errors import UnreadableRecord
from pyguard.loading import detect_format, load_runs
from pyguard.trace.textworld_import import command_of, is_textworld_run, parse_textworld
from pyguard.trace.tolerance import SkipLog

HERE = Path(__file__).parent / "textworld"
WON = HERE / "demo-model" / "0123456789abcdef0123" / "7" / "0.json"
CAPPED = HERE / "demo-model" / "0123456789abcdef0123" / "8" / "1.json"
QUIT = HERE / "other-model" / "fedcba98765432100123" / "9" / "0.json"
SILENCE = HERE / "other-model" / "fedcba98765432100123" / "10" / "2.json"


def _runs() -> dict:
    return {r.run_id: r for r in load_runs(HERE)}


def _commands(run) -> list[str | None]:  # noqa: ANN001
    return [json.loads(e.tool_calls[0].arguments)["command"] if e.tool_calls else None for e in run.events]


def test_game_records_are_detected_as_textworld_not_as_chat_messages() -> None:
    assert detect_format(WON) == "textworld"
    record = json.loads(WON.read_text())
    assert is_textworld_run(record)
    assert not is_textworld_run({"messages": record["messages"]})  # a bare message list stays OpenAI's


def test_run_ids_come_from_the_record_and_its_path() -> None:
    assert sorted(_runs()) == [
        "demo-model/0123456789ab/7/0",
        "demo-model/0123456789ab/8/1",
        "other-model/fedcba987654/10/2",
        "other-model/fedcba987654/9/0",
    ]


def test_the_example_walkthrough_is_left_out_and_each_reply_is_one_act_call() -> None:
    run = _runs()["demo-model/0123456789ab/7/0"]
    assert len(run.events) == 8  # eight replies after "Well done!"; the walkthrough's two are a demonstration
    assert run.start.task.startswith("Well done! Now play again.")
    first = run.events[0]
    assert [o.kind for o in first.observations] == ["user"] and "-= Hallway =-" in first.observations[0].text
    assert _commands(run) == [
        "N",
        "READ COOKBOOK. TAKE CARROT",
        None,
        "READ COOKBOOK",
        "TAKE CARROT",
        "SLICE CARROT WITH KNIFE",
        "PREPARE MEAL",
        "EAT MEAL",
    ]
    assert {c.name for e in run.events for c in e.tool_calls} == {"act"}
    result = run.events[1].observations[0]
    assert result.kind == "tool" and result.tool_call_id == run.events[0].tool_calls[0].id
    assert "-= Kitchen =-" in result.text and not result.is_error
    assert run.end.success_label is True and not run.end.censored


def test_a_refused_reply_is_an_error_result_and_a_reply_with_no_command_passes_the_refusal_on() -> None:
    run = _runs()["demo-model/0123456789ab/7/0"]
    refused = run.events[2].observations[0]  # the harness refused "READ COOKBOOK. TAKE CARROT"
    assert refused.kind == "tool" and refused.is_error and "multiple commands" in refused.text
    assert run.events[2].tool_calls == ()  # a parenthetical only: no command, no call
    passed_on = run.events[3].observations[0]
    assert passed_on.kind == "user" and "only a parenthetical" in passed_on.text


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("(Go north.) N", "N"),
        ("(Outer (inner) thought.) TAKE RED APPLE.", "TAKE RED APPLE"),
        ("OPEN DOOR (the wooden one)", "OPEN DOOR"),
        ("(Only a thought.)", None),
        ("(Unbalanced (thought. N", None),
        ("  ", None),
    ],
)
def test_the_command_is_read_as_the_harness_reads_it(reply: str, command: str | None) -> None:
    assert command_of(reply) == command


def test_the_turn_limit_and_the_refusal_limit_cut_a_game_off_and_quit_ends_it() -> None:
    runs = _runs()
    capped = runs["demo-model/0123456789ab/8/1"]
    assert capped.end.censored and capped.end.evidence["cut_off"] == "step_limit"
    assert capped.end.success_label is False and _commands(capped) == ["S", "N", "S", "N", "S", "N"]
    silence = runs["other-model/fedcba987654/10/2"]
    assert silence.end.censored and silence.end.evidence["cut_off"] == "error_limit"
    assert [bool(e.tool_calls) for e in silence.events] == [True, False, False, False]
    gave_up = runs["other-model/fedcba987654/9/0"]
    assert gave_up.events[-1].tool_calls[0].name == "quit"
    assert not gave_up.end.censored and gave_up.end.evidence.get("ended_by_tool") == "quit"
    assert gave_up.end.success_label is False


def test_labels_kept_apart_override_the_outcome() -> None:
    runs = {r.run_id: r for r in load_runs(HERE, labels=HERE / "labels.json")}
    assert runs["demo-model/0123456789ab/8/1"].end.success_label is True
    assert runs["demo-model/0123456789ab/7/0"].end.success_label is True  # not named: the outcome decides


def test_a_record_that_cannot_be_read_is_skipped_and_counted_or_raises_when_strict() -> None:
    good = json.loads(QUIT.read_text())
    bad = {**good, "messages": [*good["messages"][:3], "not a message"]}
    log = SkipLog()
    runs = parse_textworld([(None, bad), (None, good)], source="x/abc/9/0.json", log=log)
    assert len(runs) == 1 and log.total == 1
    with pytest.raises(UnreadableRecord, match="not a \\{role, content\\} object"):
        parse_textworld([(None, bad)], source="x/abc/9/0.json")
    no_game = {**good, "messages": good["messages"][:7]}  # the walkthrough and the marker, no reply after it
    with pytest.raises(UnreadableRecord, match="no reply after the game starts"):
        parse_textworld([(None, no_game)], source="x/abc/9/0.json")
