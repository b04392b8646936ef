"""The labelled synthetic set with its expected decisions under the default policy."""

import pytest
from engine_support import run_until_stop

from pyguard.base.decisions import Action
from pyguard.base.errors import InputError
from pyguard.base.events import Outcome
from pyguard.engine.actions import classify_action
from pyguard.testing.synthetic import KINDS, LEGITIMATE_KINDS, LOOP_KINDS, generate, labelled_set, logistics_incident

SEEDS = range(6)
MAX_DELAY = {"exact_repeat": 1, "normalised_repeat": 1, "cycle": 3, "oscillating": 2, "error_storm": 2, "divergent": 3}
"""Calls from a loop's start to its first reflection. A cycle (and an oscillation between two calls) is a repeated
state only once a whole round of it brought nothing new (issue 22): its first round's results were new, so the
delay is up to the cycle's length, not 1."""


@pytest.mark.parametrize("kind", LEGITIMATE_KINDS)
@pytest.mark.parametrize("seed", SEEDS)
def test_legitimate_runs_are_never_flagged_or_stopped(kind, seed):
    run = generate(kind, seed)
    s, ds = run_until_stop(run)
    assert [d.action for d in ds] == [Action.CONTINUE] * len(run.events), [(d.iteration, d.rule) for d in ds if d.rule]
    assert s.finish().outcome is Outcome.SUCCEEDED


@pytest.mark.parametrize("kind", LOOP_KINDS)
@pytest.mark.parametrize("seed", SEEDS)
def test_loops_are_flagged_soon_after_they_start(kind, seed):
    run = generate(kind, seed)
    _, ds = run_until_stop(run)
    flagged = [d for d in ds if d.action is not Action.CONTINUE]
    assert flagged, "loop not detected"
    first = flagged[0]
    delay = MAX_DELAY[kind]
    writes = {c.name for e in run.events for c in e.tool_calls if classify_action(c.name, c.arguments) == "write"}
    if kind == "oscillating" and writes:
        delay += 2  # two writes taking turns: a change and its undo are attempts; made again, it is the loop
    assert run.loop_start <= first.iteration <= run.loop_start + delay
    assert first.action is Action.REFLECT


def test_repeats_are_stopped_right_after_the_reflection():
    for kind in ("exact_repeat", "normalised_repeat", "cycle", "oscillating", "error_storm"):
        _, ds = run_until_stop(generate(kind, 0))
        reflect = next(d for d in ds if d.action is Action.REFLECT)
        assert ds[-1].stops and ds[-1].outcome is Outcome.STALLED
        assert ds[-1].iteration <= reflect.iteration + 2


def test_incident():
    run = logistics_incident()
    assert run.label == "loop" and run.loop_start == 2 and len(run.events) == 11
    _, ds = run_until_stop(run)
    assert ds[-1].iteration == 4 and ds[-1].stops


def test_generators_are_deterministic_and_labelled():
    assert generate("polling", 3) == generate("polling", 3)
    assert generate("polling", 3) != generate("polling", 4)
    runs = labelled_set(range(2))
    assert len(runs) == 2 * len(KINDS)
    for r in runs:
        assert (r.label == "loop") == (r.loop_start is not None)
        assert [e.index for e in r.events] == list(range(1, len(r.events) + 1))
        assert r.events[-1].is_final and all(not e.is_final for e in r.events[:-1])
    with pytest.raises(InputError, match="'nope'"):
        generate("nope")
