"""JSON a model or a tool wrote that the one safe reader refuses (100,000 ``[``, a 5,000-digit integer) or that
nests deeper than the engine reads (pyguard.engine.tool_json.MAX_DEPTH) is read as text by every engine place that
parses JSON: a decision on such an event never raises, and it is the decision the same call gets with arguments
that are not JSON."""

from __future__ import annotations

import pytest
from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.engine import Policy
from pyguard.engine.actions import classify_action
from pyguard.engine.fingerprint import fingerprint
from pyguard.engine.result_kinds import is_empty_result
from pyguard.engine.tool_json import MAX_DEPTH, NOT_JSON, tool_json
from pyguard.engine.waits import is_wait

UNCLOSED = "[" * 100_000
DEEP = "[" * 100_000 + "]" * 100_000
WALKABLE_BY_THE_PARSER = "[" * 600 + "]" * 600
"""Parsed by Python's json, but walking it recursively exhausts the stack (the fingerprint raised on it)."""
HUGE_INT = "9" * 5_000

VALUES = {"unclosed": UNCLOSED, "deep": DEEP, "deep-600": WALKABLE_BY_THE_PARSER, "huge-int": HUGE_INT}


@pytest.fixture(params=sorted(VALUES))
def hostile(request) -> str:
    return VALUES[request.param]


def test_tool_json_reads_refused_and_too_deep_json_as_text(hostile):
    assert tool_json(hostile) is NOT_JSON
    assert tool_json('{"a": ' + hostile + "}") is NOT_JSON
    deepest: list = []
    for _ in range(MAX_DEPTH - 1):
        deepest = [deepest]
    assert tool_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) == deepest
    assert tool_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)) is NOT_JSON
    assert tool_json("null") is None and tool_json("not json") is NOT_JSON


def test_an_editor_call_with_refused_arguments_is_a_write_as_with_text_arguments(hostile):
    # actions.classify_action: a named write whose arguments are JSON is judged by its sub-command ("view" reads);
    # arguments read as text leave the name to decide, as for arguments that are not JSON
    args = '{"command": "view", "path": "a.py", "x": ' + hostile + "}"
    assert classify_action("str_replace_editor", '{"command": "view", "path": "a.py"}') == "read"
    assert classify_action("str_replace_editor", args) == classify_action("str_replace_editor", "view a.py")
    assert classify_action("str_replace_editor", args) == "write"


def test_a_shell_call_with_refused_arguments_is_judged_by_its_raw_text(hostile):
    # actions._command_text: the command of a shell tool is the raw text when its arguments are not JSON (a
    # redirection in it is a write, a command at the start of a line it is not)
    for command, kind in [("echo hi > out.txt", "write"), ("rm f.txt", "read"), ("cat f.txt", "read")]:
        args = '{"cmd": "' + command + '", "x": ' + hostile + "}"
        assert classify_action("bash", args) == classify_action("bash", '{"cmd": "' + command + '", "x": oops}')
        assert classify_action("bash", args) == kind


def test_a_call_with_refused_arguments_is_no_wait_as_with_text_arguments(hostile):
    # waits.is_wait: a waiting argument counts only in JSON arguments
    assert is_wait("poll_job", '{"wait_seconds": 10}')
    assert not is_wait("poll_job", '{"wait_seconds": 10, "x": ' + hostile + "}")
    assert not is_wait("poll_job", '{"wait_seconds": ' + hostile + "}")


def test_a_refused_result_is_not_an_empty_one(hostile):
    # result_kinds.is_empty_result: a JSON text of empty collections is empty; text the reader refuses is not
    assert is_empty_result('{"items": [], "total": 0}')
    assert not is_empty_result(hostile) and not is_empty_result('{"items": ' + hostile + "}")


def test_the_fingerprint_of_refused_arguments_is_their_raw_text(hostile):
    args = '{"q": ' + hostile + "}"
    fp = fingerprint("lookup", args)
    assert fp.canonical == "lookup(raw:" + args + ")" and fp.arg_values == (args,)
    assert fingerprint("lookup", args).exact_id == fp.exact_id != fingerprint("lookup", '{"q": 1}').exact_id


def test_a_run_repeating_a_call_with_refused_arguments_is_decided_not_crashed(hostile):
    # a whole decision: pairing, classification, waits, fingerprint, novelty and the stall rules all see the call
    args = '{"q": ' + hostile + "}"
    sc = Script()
    s = Policy().new_run("r1")
    ds = [s.observe(sc.step(("lookup", args, "no such record"))) for _ in range(3)]
    assert [d.action for d in ds] == [Action.CONTINUE, Action.CONTINUE, Action.REFLECT]
    assert ds[2].rule == "repeat_no_gain"
    flag = ds[2].evidence["flags"][0]
    assert flag["tool"] == "lookup" and flag["fingerprints"][0].startswith("lookup(raw:{")
