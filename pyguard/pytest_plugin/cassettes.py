"""``pyguard_cassette``: a test runs once against a real model and is recorded; later runs replay it offline.

    def test_agent(pyguard_guard, pyguard_cassette):
        model = pyguard_cassette("cassettes/late_order.json", live=lambda: my_openai_chat_model())
        result = pyguard_guard.run("aiservices", model, "Order 12345 is late. Why?", tools=my_tools)

With ``--pyguard-record=once`` (a recording that is missing) or ``all`` (every one again) the factory returns the
``live`` model wrapped in a recorder, and the recording is written when the test ends
(:mod:`pyguard.testing.recording`); otherwise (``none``, the default, so CI never reaches a model) it returns the
scripted model replaying the file, which fails the run, naming the call, when the agent's request drifts from the
recorded one. A relative path is taken from the test file's folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

__all__: list[str] = []


class Cassettes:
    """The factory behind ``pyguard_cassette``; ``.recordings`` holds ``(path, Recording)`` of this test."""

    def __init__(self, test_dir: Path, mode: str) -> None:
        self._test_dir = test_dir
        self.mode = mode
        self.recordings: list[tuple[Path, Any]] = []

    def __call__(self, path: str | Path, *, live: Callable[[], Any] | None = None) -> Any:
        __tracebackhide__ = True
        # lazy: the plugin loads in every pytest session; the JVM edge only for a test that uses it
        from pyguard.jvm import scripted_model
        from pyguard.jvm.recording import Recording

        target = Path(path) if Path(path).is_absolute() else self._test_dir / path
        record = self.mode == "all" or (self.mode == "once" and not target.exists())
        if not record:
            if not target.exists():
                pytest.fail(
                    f"recording {target} does not exist: record it once against the real model with "
                    "pytest --pyguard-record=once",
                    pytrace=False,
                )
            return scripted_model(str(target))
        if live is None:
            pytest.fail(
                f"recording {target}: --pyguard-record={self.mode} needs live=<a function returning the real "
                "ChatModel>",
                pytrace=False,
            )
        recording = Recording(live())
        self.recordings.append((target, recording))
        return recording.model

    def save_all(self) -> None:
        while self.recordings:
            target, recording = self.recordings.pop(0)
            if recording.calls:
                recording.save(target)


@pytest.fixture
def pyguard_cassette(request: pytest.FixtureRequest, pyguard_jvm: Any) -> Iterator[Cassettes]:
    """Factory: ``pyguard_cassette(path, live=...)`` -> a ``ChatModel``: the recording replayed, or (``--pyguard-record``)
    the live model recorded into ``path`` when the test ends."""
    # lazy: settings() is defined in pyguard.pytest_plugin, which imports this module before defining it
    from pyguard.pytest_plugin import settings

    cassettes = Cassettes(Path(str(request.path)).parent, settings(request.config).record)
    try:
        yield cassettes
    finally:
        cassettes.save_all()
