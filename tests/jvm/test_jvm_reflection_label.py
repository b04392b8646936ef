"""The reflection the model receives is the guard's text, verbatim: one label, defined once (issue 13).

The model used to receive ``[pyguard guard] [pyguard] Guard notice: ...``: Java's marker on top of the header of the
guard's own text. The scripted model answers with ``{reflection}``, the reflection text exactly as it found it in the
request, so the run's answer shows what the model read.
"""

from __future__ import annotations

import pytest

from pyguard.engine.reflection import HEADER
from pyguard.jvm import load_scenario
from pyguard.live.guard import Guard

TASK = "Where is order 12345?"


def echoing_incident() -> dict:
    scenario = dict(load_scenario("logistics_incident"))
    scenario["on_reflection"] = {"recover_probability": 1.0, "answer": "READ<<{reflection}>>"}
    return scenario


@pytest.mark.parametrize("over_http", [False, True], ids=["in-process", "over-http"])
@pytest.mark.parametrize("style", ["aiservices", "executor"])
def test_the_model_receives_the_guards_reflection_with_one_label(jvm, style, over_http):
    result = Guard().run_scenario(echoing_incident(), TASK, style=style, seed=1, over_http=over_http)
    reflected = [d for d in result.decisions if d.reflection is not None]
    assert len(reflected) == 1, result.summary()
    assert result.answer == f"READ<<{reflected[0].reflection}>>", result.answer
    received = result.answer[len("READ<<") : -len(">>")]
    assert received.startswith(HEADER)
    assert received.count("[pyguard") == 1, received.splitlines()[0]  # no second label in front of the header
