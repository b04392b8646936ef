import numpy as np
import pytest

from pyguard.engine.config import NoveltyConfig
from pyguard.engine.novelty import NoveltyEstimator, ShingleNovelty, mask_volatile, prepare_text


def words(seed: int, n: int) -> str:
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return " ".join("".join(rng.choice(letters, size=rng.integers(3, 9))) for _ in range(n))


def test_new_then_repeat():
    e = ShingleNovelty()
    assert isinstance(e, NoveltyEstimator)
    text = words(1, 200)
    assert e.observe(text) == pytest.approx(1.0, abs=0.02)
    assert e.observe(text) == 0.0


def test_partly_new_is_in_between():
    e = ShingleNovelty()
    a, b = words(1, 200), words(2, 200)
    e.observe(a)
    assert 0.3 < e.observe(a + " " + b) < 0.7


def test_volatile_tokens_are_masked():
    e = ShingleNovelty()
    e.observe("status in transit checked 2024-05-01T12:00:03Z req 123e4567-e89b-12d3-a456-426614174000 took 0.53s")
    assert (
        e.observe("status in transit checked 2024-05-01T12:09:59Z req 00000000-e89b-12d3-a456-426614174999 took 1.7s")
        == 0.0
    )


def test_volatile_fields_are_masked_with_a_space_before_the_colon():
    # some pretty-printers (Jackson with a custom printer, among others) write `"key" : value`
    tight = prepare_text('{"checked_at":"2024-05-01 10:00","elapsed_ms":345678,"request_id":"r-9"}')
    spaced = prepare_text('{"checked_at" : "2024-05-01 10:00", "elapsed_ms" : 345678, "request_id" : "r-9"}')
    assert tight == '{"checked_at":"\u2400","elapsed_ms":\u2400,"request_id":"\u2400"}'
    assert spaced == '{"checked_at" : "\u2400", "elapsed_ms" : \u2400, "request_id" : "\u2400"}'
    assert "345678" not in spaced and "r-9" not in spaced
    other = prepare_text('{"checked_at" : "2024-06-02 11:30", "elapsed_ms" : 12, "request_id" : "r-10"}')
    assert other == spaced
    assert prepare_text('{"checked_at"\t:\n"2024-05-01 10:00"}') == '{"checked_at" : "\u2400"}'


def test_mask_keeps_informative_numbers():
    assert "40%" in mask_volatile("progress 40% at 12:00:01")
    assert "123456789012" in mask_volatile("tracking 123456789012")


def test_echo_is_not_news():
    e = ShingleNovelty()
    e.observe("No results found for 'alpha beta'. Try a broader query.", echo=["alpha beta"])
    assert e.observe("No results found for 'gamma delta'. Try a broader query.", echo=["gamma delta"]) == 0.0
    assert prepare_text("Order SO-1 ok", ("so-1",)) == prepare_text("Order  X-99  ok", ("X-99",))


def test_empty_text_brings_nothing():
    assert ShingleNovelty().observe("") == 0.0


def test_learn_remembers_without_scoring():
    e = ShingleNovelty()
    e.learn("the quick brown fox jumps")
    assert e.observe("the quick brown fox jumps") == 0.0


def test_memory_grows_then_rotates_and_stays_accurate():
    e = ShingleNovelty(NoveltyConfig(window_shingles=4096))
    for k in range(40):
        assert e.observe(words(k, 60)) > 0.9  # fresh text stays fresh while the table grows and rotates
    assert e.rotations > 0
    recent = words(39, 60)
    assert e.observe(recent) == 0.0  # the most recent generation is remembered


def test_reset_forgets():
    e = ShingleNovelty()
    e.observe("hello world, hello")
    e.reset()
    assert e.observe("hello world, hello") == 1.0
