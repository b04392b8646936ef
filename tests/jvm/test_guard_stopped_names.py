"""Two names for a stop, one for each side: Java's ``GuardStopException`` is what an agent's call raises when the guard
stops it (``on_stop="raise"``); Python's ``GuardStopped`` is what ``BridgeResult.raise_for_status()`` raises for a
stopped run of the low-level bridge (``pyguard.jvm.run_agent`` / ``run_built``). Each message says which it is and
what to do, and neither is raised where the other is meant."""

from __future__ import annotations

import pytest
from jvm_support import stop_at

import pyguard.jvm
from pyguard.base.errors import PyguardError
from pyguard.jvm import GuardStopped, run_agent, scripted_model


def test_guard_stopped_says_where_it_comes_from_and_what_to_do(jvm):
    r = run_agent("aiservices", scripted_model("logistics_incident", seed=0), "Where is 12345?", callback=stop_at(3))
    with pytest.raises(GuardStopped) as info:
        r.raise_for_status()
    text = str(info.value)
    assert "stalled" in text and "test_rule" in text and "test stop" in text
    assert "raise_for_status" in text and ".result" in text and 'status == "stopped"' in text, text
    assert isinstance(info.value, PyguardError)  # a Python error of pyguard's one hierarchy
    assert not isinstance(info.value, pyguard.jvm.GuardStopException)  # not Java's: an agent's call never raises it
    assert info.value.result is r


def test_the_two_names_are_told_apart_in_their_docs(jvm):
    assert "GuardStopException" in (GuardStopped.__doc__ or "")
    assert "raise_for_status" in (GuardStopped.__doc__ or "")
