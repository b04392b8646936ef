"""Recording a real model's calls (the Java ``RecordingChatModel``), for :mod:`pyguard.jvm.recorded_scenario`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pyguard.base.safe_reader import loads
from pyguard.jvm._java import jclass
from pyguard.jvm.recorded_scenario import scenario_from_calls

__all__: list[str] = []


class Recording:
    """A real ``ChatModel`` whose every call is recorded: give ``.model`` to the agent (or to the guard), run it, then
    ``save(path)`` writes the scenario that replays it (``pyguard.scripted_model(path)``)."""

    def __init__(self, model: Any) -> None:
        self.model = jclass("dev.pyguard.bridge.scripted.RecordingChatModel")(model)

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The calls recorded so far (dicts: ``user_turn``, ``turn``, ``wrap_up``, ``request_digest``, ``text``,
        ``tool_calls``, ``input_tokens``, ``output_tokens``)."""
        return list(loads(str(self.model.callsJson()), source="the recorded model calls"))

    def scenario(self, name: str) -> dict[str, Any]:
        return scenario_from_calls(self.calls, name=name)

    def save(self, path: str | os.PathLike[str], name: str | None = None) -> Path:
        """Write the scenario replaying the recorded calls to ``path`` (its name: ``name``, else the file's stem)."""
        target = Path(path)
        scenario = self.scenario(name or target.stem)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(scenario, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return target
