"""The real client path: LangChain4j's OpenAiChatModel against pyguard's local OpenAI-compatible server."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from jvm_support import STYLES, reflect_at, stop_at

from pyguard.base.errors import ConfigError
from pyguard.base.events import IterationEvent, sum_tokens
from pyguard.jvm import run_agent, start_openai_server


def record():
    seen: list[IterationEvent] = []
    return seen, (lambda e: seen.append(e))


@pytest.fixture
def server(jvm):
    servers = []

    def start(scenario="convergent", **kw):
        s = start_openai_server(scenario, **kw)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


@pytest.mark.parametrize("style", STYLES)
def test_usage_arrives_over_http(server, style):
    s = server("convergent")
    seen, policy = record()
    r = run_agent(style, s.chat_model(), "Where is order 34567?", callback=policy, tools=s)
    assert r.status == "answered" and r.answer.startswith("Order 34567 is held")
    assert len(seen) == r.stats.model_calls == s.requests == 4
    assert {e.provider for e in seen} == {"OPEN_AI"}
    assert sum(e.input_tokens for e in seen) == s.java.reportedInputTokens()
    assert sum(e.output_tokens for e in seen) == s.java.reportedOutputTokens()
    assert seen[1].observations[0].text.startswith("Order 34567: status EXCEPTION")
    assert seen[1].observations[0].tool_call_id == seen[0].tool_calls[0].id == "call_1_1"


def test_stop_and_reflection_over_http(server):
    s = server("logistics_incident", seed=0)
    r = run_agent("aiservices", s.chat_model(), "Where is 12345?", callback=stop_at(4, rule="cycle"), tools=s)
    assert (r.status, r.rule, r.stats.model_calls, s.requests) == ("stopped", "cycle", 4, 4)
    s2 = server("oscillating", seed=1)
    r2 = run_agent("executor", s2.chat_model(), "status?", callback=reflect_at(2), tools=s2)
    assert r2.status == "answered" and r2.answer.startswith("The status has not changed")  # reflection seen over HTTP


def test_server_that_omits_usage(server):
    s = server("convergent", fault="omit_usage")
    seen, policy = record()
    r = run_agent("aiservices", s.chat_model(), "x", callback=policy, tools=s)
    assert r.status == "answered" and len(seen) == 4
    assert all(e.input_tokens is None and e.total_tokens is None for e in seen)
    assert sum_tokens(seen) is None  # unknown, not 0


@pytest.mark.parametrize(
    ("fault", "expect"),
    [("http_500", "InternalServerException"), ("http_429", "RateLimitException"), ("malformed_json", "")],
)
def test_faults_fail_clearly_with_an_error_event(server, fault, expect):
    s = server("convergent", fault=fault, fault_from=3)
    seen, policy = record()
    r = run_agent("aiservices", s.chat_model(), "x", callback=policy, tools=s)
    assert r.status == "failed" and r.outcome is None  # a failure has no stop outcome: the Guard decides the run's
    assert len(seen) == r.stats.model_calls == 3 and s.requests == 3  # no retry, no hang
    assert [e.error is None for e in seen] == [True, True, False]
    assert seen[2].error and r.error
    if expect:  # LangChain4j's own exception type for the HTTP status, in the event and the result
        assert expect in seen[2].error and expect in r.error, (seen[2].error, r.error)


def test_bounded_retries_are_applied(server):
    s = server("convergent", fault="http_500")
    r = run_agent("executor", s.chat_model(max_retries=2), "x", callback=lambda e: None, tools=s)
    assert r.status == "failed" and s.requests == 3 and r.stats.events == 1  # one logical call, one event


def test_parallel_runs_over_one_server(server):
    s = server("logistics_incident", seed=0)

    def one(i):
        return i, run_agent(
            "aiservices", s.chat_model(), f"task {i}", callback=stop_at(2 + i % 4), run_id=f"h{i}", tools=s
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, range(16)))
    for i, r in results:
        assert r.status == "stopped" and {e.run_id for e in r.events} == {f"h{i}"}
        assert [e.index for e in r.events] == list(range(1, 3 + i % 4))
    assert s.requests == sum(2 + i % 4 for i in range(16))


def test_plain_http_protocol(server):
    s = server("pagination")
    req = urllib.request.Request(
        s.base_url + "/chat/completions",
        method="POST",
        headers={"Content-Type": "application/json"},
        data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "list delayed orders"}]}).encode(),
    )
    body = json.load(urllib.request.urlopen(req, timeout=10))
    call = body["choices"][0]["message"]["tool_calls"][0]
    assert call["type"] == "function" and call["function"]["name"] == "list_orders"
    assert json.loads(call["function"]["arguments"]) == {"page": 1}
    assert body["choices"][0]["finish_reason"] == "tool_calls" and body["usage"]["total_tokens"] > 0
    bad = urllib.request.Request(s.base_url + "/chat/completions", method="POST", data=b"{nope")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(bad, timeout=10)
    assert info.value.code == 400


def test_bad_server_options(jvm):
    with pytest.raises(ConfigError, match="fault='teapot'"):
        start_openai_server("convergent", fault="teapot")
    with pytest.raises(ConfigError, match="port=70000"):
        start_openai_server("convergent", port=70000)


def test_a_server_left_running_does_not_keep_the_process_alive(jvm):
    import subprocess
    import sys

    code = (
        "from pyguard.jvm import start_jvm, start_openai_server, run_agent\n"
        "start_jvm()\n"
        "s = start_openai_server('convergent')\n"
        "print(run_agent('executor', s.chat_model(), 'x', guard=False, tools=s).status)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)  # a hang guard only
    assert out.returncode == 0 and out.stdout.strip() == "answered", out.stderr
