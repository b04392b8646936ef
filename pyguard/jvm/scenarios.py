"""Scenario files for the Java scripted model: find them by name, load them from a path or a dict.

Pure Python (no JVM): the Java ``ScriptedChatModel`` and the local server parse and validate the JSON themselves;
here a scenario is only located and turned into one JSON string. The format is documented in
``pyguard/scenarios/README.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyguard.base.errors import InputError
from pyguard.base.safe_reader import check_depth, load_json_file

__all__: list[str] = []

ScenarioSource = str | os.PathLike[str] | Mapping[str, Any]
"""A scenario name (``"logistics_incident"``), a path to a JSON file, or the scenario itself as a dict."""


def scenario_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "scenarios"


def scenario_names() -> list[str]:
    """The scenarios shipped with pyguard."""
    return sorted(p.stem for p in scenario_dir().glob("*.json"))


def scenario_path(name: str) -> Path:
    p = scenario_dir() / f"{name}.json"
    if not p.is_file():
        raise InputError(
            f"unknown scenario {name!r}; shipped scenarios: {', '.join(scenario_names())} (or pass a path or a dict)"
        )
    return p


def load_scenario(source: ScenarioSource) -> dict[str, Any]:
    """The scenario as a dict, from a shipped name, a JSON file path, or a mapping (copied)."""
    if isinstance(source, Mapping):
        check_depth(source, source="the scenario")  # before json.dumps, which recurses once per level
        data = json.loads(json.dumps(source))
    else:
        text = str(source)
        path = Path(text)
        if not (text.endswith(".json") or os.sep in text or "/" in text):
            path = scenario_path(text)
        if not path.is_file():
            raise InputError(f"scenario file {path} does not exist")
        data = load_json_file(path, what="scenario file")  # the one safe reader: size, depth, integer limits
    if not isinstance(data, dict) or ("turns" not in data and "conversation" not in data):
        raise InputError(
            f"scenario {str(source)[:80]!r} must be a JSON object with 'name' and 'turns' (or 'conversation')"
        )
    return data


def scenario_json(source: ScenarioSource) -> str:
    return json.dumps(load_scenario(source), ensure_ascii=False)
