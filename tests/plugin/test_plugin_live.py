"""pyguard_live_model: skips with a clear reason where no Docker engine is reachable; the container path is checked
with a stand-in container (these machines have no Docker engine)."""

from __future__ import annotations

import sys

import pytest

from pyguard.base.errors import RunError
from pyguard.pytest_plugin.live import LiveModel, docker_unavailable_reason, start_live_model

LIVE_TEST = """
def test_live(pyguard_live_model):
    raise AssertionError("must not run without a Docker engine")
"""


def test_without_a_docker_engine_the_fixture_skips_naming_the_engine_it_tried(pytester, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{pytester.path}/no-docker.sock")
    pytester.makepyfile(LIVE_TEST)
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            f"SKIPPED *no Docker engine reachable at unix://{pytester.path}/no-docker.sock (*); "
            "pyguard_live_model needs Docker: start a Docker engine or set DOCKER_HOST"
        ]
    )


def test_without_testcontainers_the_reason_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "testcontainers", None)  # makes `import testcontainers` fail
    reason = docker_unavailable_reason()
    assert reason == (
        "pyguard_live_model needs testcontainers (testcontainers is not installed): pip install 'pyguard[containers]'"
    )


class FakeOllama:
    """Stands in for testcontainers' OllamaContainer: records what the fixture asks of it."""

    instances: list[FakeOllama] = []

    def __init__(self, image: str, models=(), pull_exit: int = 0) -> None:
        self.image, self.models, self.pull_exit = image, list(models), pull_exit
        self.calls: list[object] = []
        FakeOllama.instances.append(self)

    def start(self):
        self.calls.append("start")
        return self

    def list_models(self):
        return [{"name": m} for m in self.models]

    def exec(self, command):
        self.calls.append(tuple(command))
        return self.pull_exit, b"pulling manifest\nError: pull model manifest: file does not exist\n"

    def get_endpoint(self):
        return "http://localhost:32768"

    def stop(self):
        self.calls.append("stop")


def test_the_container_pulls_a_missing_model_and_reports_both_endpoints():
    live, stop = start_live_model("ollama/ollama:0.5.7", "qwen2.5:0.5b", container_factory=FakeOllama)
    container = FakeOllama.instances[-1]
    assert container.image == "ollama/ollama:0.5.7"
    assert container.calls == ["start", ("ollama", "pull", "qwen2.5:0.5b")]
    assert live == LiveModel(base_url="http://localhost:32768", model_name="qwen2.5:0.5b", image="ollama/ollama:0.5.7")
    assert live.openai_base_url == "http://localhost:32768/v1"
    stop()
    assert container.calls[-1] == "stop"


def test_a_model_already_there_is_not_pulled_again():
    start_live_model("img", "tiny", container_factory=lambda image: FakeOllama(image, models=["tiny"]))
    assert FakeOllama.instances[-1].calls == ["start"]


def test_a_failed_pull_stops_the_container_and_says_what_to_check():
    with pytest.raises(
        RunError,
        match=r"ollama could not pull model 'nope:1b' \(exit 1\): .*file does not exist; "
        r"check the name \(--pyguard-live-model\)",
    ):
        start_live_model("img", "nope:1b", container_factory=lambda image: FakeOllama(image, pull_exit=1))
    assert FakeOllama.instances[-1].calls[-1] == "stop"


def test_the_live_image_and_model_come_from_the_options(pytester, monkeypatch):
    pytester.makepyfile(
        """
        from pyguard.pytest_plugin import settings

        def test_show(request):
            s = settings(request.config)
            assert (s.live_image, s.live_model) == ("ollama/ollama:0.6.0", "llama3.2:1b")
        """
    )
    pytester.runpytest("--pyguard-live-image=ollama/ollama:0.6.0", "--pyguard-live-model=llama3.2:1b").assert_outcomes(
        passed=1
    )
