"""Fixtures of the gate's tests: synthetic run sets (see pyguard.check.synthetic)."""

import pytest

from pyguard.check.synthetic import synth_runs, synth_summary


@pytest.fixture
def make_runs():
    return synth_runs


@pytest.fixture
def make_summary():
    return synth_summary
