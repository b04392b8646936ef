import pytest

from pyguard.tune import SearchSpace

TINY = SearchSpace(
    base_budget=(3, 6, 8),
    hard_cap=(6, 8, 12, 25, 40),
    extension=(0, 4),
    earn_threshold=(0.2,),
    earn_per_iteration=(1,),
    low_gain_threshold=(0.1,),
    low_gain_streak=(3,),
    low_gain_streak_after_reflection=(2,),
    error_storm_length=(3,),
    polling_allowance=(10,),
    max_fruitless_attempts=(6,),
    nothing_new_window=(35,),
    nothing_new_max_new=(2,),
)
"""One stall candidate (one engine pass), a small budget grid: tune in a second or two."""


@pytest.fixture
def tiny_space() -> SearchSpace:
    return TINY
