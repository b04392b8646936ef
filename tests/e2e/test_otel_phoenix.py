"""A real backend: Arize Phoenix, started locally, receives a guarded LangChain4j run over OTLP/HTTP, and its REST API
gives back the run tree (agent, model-call and tool spans) and the guard's decisions with their attributes, the
guardrail spans as Phoenix's own GUARDRAIL kind.

Phoenix runs as a subprocess on 127.0.0.1 (HTTP; its gRPC collector binds every interface, on a free port, for the
test's lifetime: Phoenix has no setting for that address), in a temporary working directory with its SQLite file,
telemetry pixels and external resources off. Needs the ``phoenix`` extra (``arize-phoenix``), which ``make setup``
installs."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
if importlib.util.find_spec("phoenix") is None:  # not imported here: Phoenix is heavy, and runs in its own process
    pytest.skip(
        "Arize Phoenix is not installed: pip install 'pyguard[phoenix]' (make setup does)", allow_module_level=True
    )

from pyguard.jvm import load_scenario  # noqa: E402
from pyguard.live.guard import Guard  # noqa: E402
from pyguard.otel import GuardTelemetry  # noqa: E402
from pyguard.otel import semconv as sc

POLLS = 1200
"""At most this many polls of the health endpoint, and of the spans, each at most half a second apart: ten minutes, a
guard against a Phoenix that hangs only (it took 60 s to answer on /healthz at load 25 on two cores, and over 120 s
under the whole suite with two busy loops)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 (a local URL the test built)
        return json.load(response)


def poll(proc: subprocess.Popen, ready: Callable[[], Any], what: str) -> Any:
    """``ready()``'s first truthy value, polled at most POLLS times; between polls, waits for Phoenix to exit (at most
    half a second), so a Phoenix that dies ends the wait at once with its log."""
    for _ in range(POLLS):
        found = ready()
        if found:
            return found
        try:
            proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            continue
        pytest.fail(f"Phoenix exited ({proc.returncode}) while waiting for {what}")
    pytest.fail(f"Phoenix: no {what} after {POLLS} polls")


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory) -> Iterator[tuple[str, subprocess.Popen]]:
    workdir = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_SQL_DATABASE_URL": f"sqlite:///{workdir / 'phoenix.db'}",
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    log = open(workdir / "phoenix.log", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"], env=env, cwd=workdir, stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:  # noqa: S310
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    try:
        poll(proc, healthy, "answer on /healthz")
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def flat(attributes: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Phoenix's attributes (nested by the dots of their names) as flat dotted keys."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flat(value, f"{name}."))
        else:
            out[name] = value
    return out


def test_phoenix_shows_the_run_tree_and_the_guards_decisions(jvm, phoenix):
    base, proc = phoenix
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {**scenario["on_reflection"], "recover_probability": 0.0}  # reflects, then stops
    telemetry = GuardTelemetry.to_otlp(f"{base}/v1/traces", service_name="pyguard-phoenix-test")
    result = Guard(telemetry=telemetry).run_scenario(scenario, "Where is order 12345?", seed=3, task_type="lookup")
    telemetry.shutdown()  # exports what is batched
    assert result.outcome.value == "stalled"
    expected = 1 + result.model_calls + 2  # the agent, its model calls, two guardrail spans (and the tools)

    def arrived() -> list[dict[str, Any]] | None:
        body = get_json(f"{base}/v1/projects/default/spans?limit=1000")
        spans = [{**s, "attributes": flat(s.get("attributes") or {})} for s in body.get("data", ())]
        ours = [s for s in spans if s["attributes"].get(sc.PG_RUN_ID) or s["attributes"].get(sc.OPERATION_NAME)]
        return ours if len(ours) >= expected else None

    spans = poll(proc, arrived, f"{expected} spans")
    by_op: dict[str, list[dict[str, Any]]] = {}
    for s in spans:
        by_op.setdefault(s["attributes"][sc.OPERATION_NAME], []).append(s)
    (agent,) = by_op["invoke_agent"]
    chats = sorted(by_op["chat"], key=lambda s: s["attributes"][sc.PG_ITERATION])
    assert len(chats) == result.model_calls and by_op["execute_tool"]
    agent_id = agent["context"]["span_id"]
    assert all(s["parent_id"] == agent_id for s in chats + by_op["execute_tool"] + by_op["run_guardrail"])
    assert {s["context"]["trace_id"] for s in spans} == {agent["context"]["trace_id"]}
    # the attributes as sent: tokens and decisions per model call, the outcome on the agent
    events = result.record.events
    assert [c["attributes"][sc.USAGE_INPUT_TOKENS] for c in chats] == [e.input_tokens for e in events]
    # a chat span carries the decision on its call's response, a guardrail span one on its results (made before the
    # next call): together, the run's decision per call
    acted = {s["attributes"][sc.PG_ITERATION]: s["attributes"][sc.PG_ACTION] for s in by_op["run_guardrail"]}
    per_call = [acted.get(c["attributes"][sc.PG_ITERATION], c["attributes"][sc.PG_ACTION]) for c in chats]
    assert per_call == [d.action.value for d in result.decisions]
    assert agent["attributes"][sc.PG_OUTCOME] == "stalled" and agent["status_code"] == "ERROR"
    assert agent["attributes"][sc.ERROR_TYPE] == "stalled"
    assert {s["span_kind"] for s in chats} == {"LLM"} and {s["span_kind"] for s in by_op["execute_tool"]} == {"TOOL"}
    assert agent["span_kind"] == "AGENT"
    # the guard's decisions, as Phoenix's own guardrail spans
    guardrails = sorted(by_op["run_guardrail"], key=lambda s: s["attributes"][sc.PG_ITERATION])
    assert [s["span_kind"] for s in guardrails] == ["GUARDRAIL", "GUARDRAIL"]
    assert [s["attributes"][sc.GUARDRAIL_VERDICT_TYPE] for s in guardrails] == ["warn", "deny"]
    stop = next(d for d in result.decisions if d.action.value == "stop")
    assert guardrails[1]["attributes"][sc.GUARDRAIL_POLICY_RULE_ID] == stop.rule
    assert guardrails[1]["attributes"][sc.OPENINFERENCE_OUTPUT] == f"stop {stop.rule}"
