"""Fixtures for engine tests."""

import pytest
from engine_support import FakeClock, Script


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def script() -> Script:
    return Script()
