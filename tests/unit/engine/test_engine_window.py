"""The engine reads at most a fixed window of each observation: the whole text up to WINDOW_CHARS, else its head,
its tail and a checksum of the whole. No timing here (benchmarks/suites/engine_scaling.py measures it): what is
checked is what the engine reads and what the window allocates."""

from __future__ import annotations

import tracemalloc

import pytest

import pyguard.engine.results as results_module
from pyguard.base.events import IterationEvent, Observation, ToolCall
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.window import EDGE_CHARS, WINDOW_CHARS, observed_text

MARKER_MAX = 200  # the line standing for the left-out middle


def test_a_text_inside_the_window_is_read_whole():
    for size in (0, 1, 5_000, WINDOW_CHARS):
        text = "x" * size
        assert observed_text(text) is text


def test_a_longer_text_is_its_head_its_tail_and_one_line_for_the_rest():
    text = "h" * EDGE_CHARS + "m" * 1_000 + "t" * EDGE_CHARS
    seen = observed_text(text)
    assert seen.startswith("h" * EDGE_CHARS) and seen.endswith("t" * EDGE_CHARS)
    middle = seen[EDGE_CHARS:-EDGE_CHARS]
    assert len(middle) < MARKER_MAX and "m" * 8 not in middle  # the left-out middle is not read
    assert f"1000 characters of {2 * EDGE_CHARS + 1000} not read" in seen
    assert len(seen) <= WINDOW_CHARS + MARKER_MAX


@pytest.mark.parametrize("where", [EDGE_CHARS + 10, 3 * EDGE_CHARS, 5 * EDGE_CHARS - 1])
def test_long_texts_that_differ_only_in_the_middle_read_differently_and_equal_ones_alike(where):
    base = "".join(chr(97 + (i * 7) % 26) for i in range(6 * EDGE_CHARS))
    changed = base[:where] + ("!" if base[where] != "!" else "?") + base[where + 1 :]
    assert observed_text(base) == observed_text(base[:])
    assert observed_text(changed) != observed_text(base)
    # the checksum is written in letters: the masking of volatile tokens (digits, hex ids) leaves it alone
    assert observed_text(changed).split("checksum ")[1].split("]")[0].isalpha()


def test_non_ascii_and_lone_surrogates_are_read():
    text = ("é\ud800" * (WINDOW_CHARS // 2)) + "z" * 10
    assert len(observed_text(text)) <= WINDOW_CHARS + MARKER_MAX


def _peak_allocated(text: str) -> int:
    tracemalloc.start()
    try:
        observed_text(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def test_the_window_allocates_a_constant_whatever_the_texts_size():
    small = _peak_allocated("abcdefghij" * 2_000_000)  # 20 MB
    large = _peak_allocated("abcdefghij" * 6_000_000)  # 60 MB
    # one slice of the checksum's reading (as text and as UTF-8 bytes) and the window, whatever the size: the same
    # peak for 60 MB as for 20 MB, and a small part of the 20 MB
    assert abs(large - small) < 65_536, (small, large)
    assert small < 20_000_000 // 8, small


def test_the_engine_reads_no_more_than_the_window_of_a_huge_observation(monkeypatch):
    lengths: list[int] = []
    real = results_module.prepare_text

    def spy(text, *args, **kwargs):
        lengths.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(results_module, "prepare_text", spy)
    session = Policy(PolicyConfig()).new_run("big")
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "dump.log"}')
    session.observe(
        IterationEvent(run_id="big", index=1, tool_calls=(call,), observations=(Observation(kind="user", text="go"),))
    )
    huge = "line of a very long log 0123\n" * 400_000  # 11.6 MB
    decision = session.observe(
        IterationEvent(
            run_id="big",
            index=2,
            tool_calls=(ToolCall(id="c2", name="read_file", arguments='{"path": "dump.log"}'),),
            observations=(Observation(kind="tool", tool_call_id="c1", tool_name="read_file", text=huge),),
        )
    )
    assert decision.iteration == 2
    assert lengths and max(lengths) <= WINDOW_CHARS + MARKER_MAX, lengths


def test_the_scaling_suites_observation_size_section_runs(monkeypatch):
    """benchmarks/suites/engine_scaling.py's by_observation_size (quick sizes, cut smaller): well-formed, no timing."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import suites.engine_scaling as scaling

    monkeypatch.setattr(scaling, "OBSERVATION_SIZES", {"1KB": 1_000, "200KB": 200_000})
    monkeypatch.setattr(scaling, "QUICK_OBSERVATION_SIZES", ("1KB", "200KB"))
    rows = scaling._by_observation_size(True, scaling._Texts(1))
    assert [r["observation"] for r in rows] == ["1KB", "200KB"]
    assert all(r["ms_per_decision"] > 0 and r["peak_alloc_mb"] > 0 and r["repeats"] == 1 for r in rows)
