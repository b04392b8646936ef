"""The JVM fixtures, run in a pytest subprocess (a JVM starts once per process and cannot restart)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.jvm

INNER = """
import socket
import urllib.request

import jpype
import pytest

SERVERS = []


def test_the_jvm_has_the_user_classpath(pyguard_jvm):
    assert any(p.endswith("user-classes") for p in pyguard_jvm.classpath)
    loader = jpype.JClass("java.lang.ClassLoader").getSystemClassLoader()
    assert loader.getResource("agent-marker.txt") is not None


def test_the_jvm_is_started_once_per_session(pyguard_jvm):
    from pyguard.jvm import start_jvm
    assert start_jvm() is pyguard_jvm


def test_scripted_model_factory(pyguard_scripted_model):
    model = pyguard_scripted_model("logistics_incident", seed=3)
    assert isinstance(model, jpype.JClass("dev.langchain4j.model.chat.ChatModel"))
    assert str(model.scenario().name()) == "logistics_incident"
    # a relative path is found next to the test file
    assert str(pyguard_scripted_model("mine.json").scenario().name()) == "mine"


def test_openai_server_factory(pyguard_openai_server):
    url = pyguard_openai_server("mine.json")
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    body = b'{"model":"m","messages":[{"role":"user","content":"hi"}]}'
    req = urllib.request.Request(url + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as response:
        assert b"Done." in response.read()
    SERVERS.append(pyguard_openai_server.last.port)


def test_the_server_was_stopped_at_teardown():
    (port,) = SERVERS
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
"""

SCENARIO = '{"name": "mine", "toolset": "none", "turns": [{"answer": "Done."}]}'


def test_jvm_fixtures_in_a_subprocess(pytester: pytest.Pytester):
    (pytester.path / "user-classes").mkdir()
    (pytester.path / "user-classes" / "agent-marker.txt").write_text("x")
    pytester.makefile(".json", mine=SCENARIO)
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_subprocess("--pyguard-classpath", "user-classes", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)


def test_a_missing_classpath_entry_fails_the_fixture_naming_it(pytester: pytest.Pytester):
    pytester.makepyfile("def test_x(pyguard_jvm):\n    pass\n")
    result = pytester.runpytest_subprocess("--pyguard-classpath", "target/agent.jar")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*pyguard_jvm: --pyguard-classpath entry '*target/agent.jar' does not exist: build the agent first*"]
    )


def test_a_bad_scenario_shows_the_tests_frame_not_pyguards(pytester: pytest.Pytester):
    (pytester.path / "broken.json").write_text('{"turns": [\n  {"text": "hi",}\n]}\n')
    pytester.makepyfile("def test_x(pyguard_scripted_model):\n    pyguard_scripted_model('broken.json')\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["*pyguard_scripted_model('broken.json')", "E   *broken.json*line 2*"])
    assert "pyguard/jvm/" not in out and "pyguard/pytest_plugin/" not in out, out


def test_a_scripted_model_with_tools_lints_the_scenario_first(pytester: pytest.Pytester):
    typo = {
        "name": "typo",
        "toolset": "logistics",
        "turns": [{"tool_calls": [{"name": "get_shipment_status", "arguments": {"orderID": "1"}}]}],
    }
    (pytester.path / "typo.json").write_text(json.dumps(typo))
    pytester.makepyfile(
        """
        def test_x(pyguard_scripted_model):
            pyguard_scripted_model("typo.json", tools="dev.pyguard.bridge.demo.LogisticsTools")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E   *ScenarioLintError: scenario *typo.json scripts 2 tool call(s) the agent's tools would not accept:",
            "E  *$.turns*tool_calls* (get_shipment_status): unknown argument 'orderID' (did you mean 'orderId'?)*",
        ]
    )


GUARD_TESTS = """
import os

import pytest

from pyguard.testing import assert_outcome, assert_succeeded


@pytest.mark.pyguard(task_type="lookup")
def test_a_scenario_converges(pyguard_guard):
    result = pyguard_guard.run_scenario("convergent")
    assert_succeeded(result)
    assert result.task_type == "lookup"
    assert pyguard_guard.results == [result]


@pytest.mark.pyguard(max_iterations=2)
def test_the_marker_caps_model_calls(pyguard_guard):
    assert pyguard_guard.policy.caps.max_model_calls == 2
    result = pyguard_guard.run_scenario("logistics_incident")
    assert_outcome(result, "expired")
    assert result.iterations == 2


def test_a_failing_run_keeps_its_trace(pyguard_guard):
    assert_succeeded(pyguard_guard.run_scenario("logistics_incident"), within=2)  # it answers at call 3


def test_own_agent_through_start_run(pyguard_guard, pyguard_scripted_model):
    from pyguard.jvm import build_agent, tool_set, scenario_tools

    with pyguard_guard.start_run(task="Where is 12345?") as run:
        agent = build_agent("aiservices", run.guarded_model(pyguard_scripted_model("convergent")),
                            tools=scenario_tools("convergent"))
        run.call(lambda: agent.runJson("Where is 12345?"))
    assert pyguard_guard.results == [run.result]
"""


def test_pyguard_guard_under_xdist(pytester: pytest.Pytester):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_guarded=GUARD_TESTS)
    out = pytester.path / "traces"
    result = pytester.runpytest_subprocess("-n", "2", "--pyguard-trace-dir", str(out), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    assert sorted(p.name for p in out.glob("*.jsonl")) == ["test_guarded.py__test_a_failing_run_keeps_its_trace.jsonl"]
    result.stdout.fnmatch_lines(
        [
            "*- pyguard traces -*",
            "trace of 1 run(s): *test_a_failing_run_keeps_its_trace.jsonl",
            "run *: outcome=* reason=*",
        ]
    )


CASSETTE_TEST = """
from pyguard.pytest_plugin.fixtures import openai_chat_model

TASK = "Order 12345 is late. Why, and what can we do about it?"

def test_late_order(pyguard_guard, pyguard_cassette, pyguard_openai_server):
    def live():
        if LIVE_FORBIDDEN:
            raise AssertionError("the live model was asked for while replaying")
        return openai_chat_model(pyguard_openai_server("logistics_incident"), "gpt-test")

    model = pyguard_cassette("cassettes/late.json", live=live)
    result = pyguard_guard.run("aiservices", model, TASK, tools="logistics")
    assert result.succeeded and result.model_calls == 3
"""


def test_a_test_records_against_the_local_server_once_then_replays_offline(pytester: pytest.Pytester):
    pytester.makepyfile(test_cassette="LIVE_FORBIDDEN = False\n" + CASSETTE_TEST)
    missing = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*recording *late.json does not exist: record it once * --pyguard-record=once"])

    recorded = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--pyguard-record=once")
    recorded.assert_outcomes(passed=1)
    cassette = json.loads((pytester.path / "cassettes" / "late.json").read_text())
    assert len(cassette["turns"]) == 3 and all("request_digest" in t for t in cassette["turns"])

    pytester.makepyfile(test_cassette="LIVE_FORBIDDEN = True\n" + CASSETTE_TEST)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)  # offline: live() never called
