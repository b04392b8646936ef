"""Empty results ("[]", "No matching records found.") score zero gain, even the first time they are seen."""

import json

import pytest
from engine_support import Script
from hypothesis import given, settings
from hypothesis import strategies as st

from pyguard.base.decisions import Action
from pyguard.engine import Policy, PolicyConfig
from pyguard.engine.config import StallConfig
from pyguard.engine.fingerprint import fingerprint
from pyguard.engine.novelty import prepare_text
from pyguard.engine.result_kinds import is_empty_result
from pyguard.engine.stall import StallDetector
from pyguard.engine.steps import ActionResult, Step


def empty(text: str, echo: tuple[str, ...] = ()) -> bool:
    return is_empty_result(prepare_text(text, echo))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "[]",
        "{}",
        "null",
        '{"items": [], "total": 0}',
        '{"data": {"rows": []}, "error": null, "truncated": false}',
        '{"results": [], "fetched_at": "2024-06-01T10:00:00Z"}',
        "No matching records found.",
        "no records",
        "0 rows returned.",
        "Zero results.",
        "not found",
        "NOT_FOUND",
        "404 Not Found",
        "Nothing found",
        "None",
        "(empty)",
    ],
)
def test_empty_results(text):
    assert empty(text)


def test_echoed_arguments_are_not_content():
    assert empty("Order 12345 not found", echo=("12345",))
    assert empty("12345", echo=("12345",))  # the tool only echoed its argument back


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "0",
        '{"total": 0}',  # no empty collection: a count, not an empty listing
        '{"items": [], "page": 3}',
        '{"items": [{"id": 1}]}',
        '[{"id": 1}]',
        '[""]',
        '{"items": [], "note": "index rebuilt"}',
        "2024-06-01T10:00:00Z",  # a bare timestamp is not "nothing" (the clock tool's answer)
        "No results found for 'x'. Try a broader query or check the spelling.",
        "No article matches x exactly. Related: 'Cedar Dune (faq)', 'Maple Onyx (policy)'.",
        "The page you asked for was not found, but here are 3 related articles: a, b, c",
        "customer record for acme corp was not found",
        "no such file or directory",
        "[] plus a trailing note",
        "not found " * 20,  # long: says more than "nothing"
    ],
)
def test_not_empty(text):
    assert not empty(text)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=121, max_size=400))
def test_long_texts_are_never_empty(text):
    assert len(prepare_text(text).strip()) <= 120 or not empty(text)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.text(min_size=1, max_size=8), st.lists(st.integers(), max_size=2), min_size=1, max_size=4),
    st.one_of(st.integers(min_value=1), st.text(alphabet="abcxyz", min_size=1, max_size=10)),
)
def test_json_with_any_content_is_not_empty(listing, value):
    assert not empty(json.dumps(dict(listing, extra=value)))


STREAK3 = StallConfig(low_gain_streak=3)
"""These tests are about what counts as empty, not about the streak length: they fix it at 3."""


def run(steps, config=None):
    s = Policy(config or PolicyConfig(stall=STREAK3)).new_run("r1")
    return s, [s.observe(ev) for ev in steps]


def rules(decisions):
    return [(d.iteration, d.rule, d.action.value) for d in decisions if d.action is not Action.CONTINUE]


def _stall_steps(n: int, result: str = "No matching records found."):
    sc = Script()
    return [sc.step(("query_logs", {"window": f"last {k + 1} hours"}, result)) for k in range(n)]


def test_a_run_finding_nothing_is_low_gain_from_its_first_empty_result():
    s, ds = run(_stall_steps(5))
    assert s.gains[1:4] == [0.0, 0.0, 0.0]  # iteration 2 brings the first empty result: no gain
    assert rules(ds)[0] == (4, "low_gain_streak", "reflect")
    # before the rule, the first empty result counted as new: the reflection came one call later
    s_old, ds_old = run(
        _stall_steps(5), PolicyConfig(stall=StallConfig(low_gain_streak=3, empty_results_no_gain=False))
    )
    assert s_old.gains[1] == pytest.approx(1.0)
    assert rules(ds_old)[0] == (5, "low_gain_streak", "reflect")


@pytest.mark.parametrize("result", ['{"items": [], "total": 0}', "[]", "0 rows returned."])
def test_every_empty_shape_of_the_benchmark(result):
    _, ds = run(_stall_steps(4, result))
    assert rules(ds) == [(4, "low_gain_streak", "reflect")]


def test_one_empty_result_among_productive_ones_is_not_a_stall():
    sc = Script()
    steps = [
        sc.step(
            (
                "get_order",
                {"id": f"O-{k}"},
                f"order {k}: {'shipped' if k % 2 else 'held'} to city {k * 37}, owner team-{k * 11}, amount {k * 1013}",
            )
        )
        for k in range(3)
    ]
    steps.append(sc.step(("get_order", {"id": "O-99"}, "[]")))
    steps += [
        sc.step(("get_customer", {"id": f"C-{k}"}, f"customer {k}: tier {k * 7}, region r{k * 13}, since {1990 + k}"))
        for k in range(4)
    ]
    steps.append(sc.answer("done"))
    s, ds = run(steps)
    assert rules(ds) == []
    assert s.gains[4] == 0.0 and min(s.gains[5:8]) > 0.2


def test_a_poll_whose_result_becomes_empty_is_still_credited_as_changed():
    d = StallDetector(StallConfig())
    fp = fingerprint("check_queue", '{"q": "jobs"}')

    def r(it, key, is_empty):
        return ActionResult(action=fp, novelty=0.8, result_key=key, requested_at=it - 1, empty=is_empty)

    d.observe(Step(1, actions=(fp,)))
    assert d.observe(Step(2, results=(r(2, "a", False),), actions=(fp,))).gain == pytest.approx(0.8)
    rep = d.observe(Step(3, results=(r(3, "b", True),), actions=(fp,)))
    assert rep.gain == pytest.approx(StallConfig().changed_result_gain) and rep.stalls == ()


def test_the_rule_can_be_switched_off_in_the_detector():
    fp = fingerprint("search", '{"q": "x"}')
    res = ActionResult(action=fp, novelty=1.0, result_key="k", requested_at=1, empty=True)
    on = StallDetector(StallConfig())
    off = StallDetector(StallConfig(empty_results_no_gain=False))
    for d, want in ((on, 0.0), (off, 1.0)):
        d.observe(Step(1, actions=(fp,)))
        assert d.observe(Step(2, results=(res,))).gain == want


def test_user_messages_are_never_empty_results():
    sc = Script(task="none")
    s, _ = run([sc.step(("lookup", {"id": "1"}, "a productive answer with content"))])
    assert s.gains == [1.0]


def _until_stop(steps, config):
    s = Policy(config).new_run("r1")
    decisions = []
    for ev in steps:
        decisions.append(s.observe(ev))
        if decisions[-1].stops:
            break
    return rules(decisions), decisions


def test_a_streak_of_empty_answers_is_a_stall_one_iteration_before_a_dull_one():
    # defaults: low-gain streak 4 (3 after a reflection), a streak of nothing but empty answers 3 (2 after)
    default = PolicyConfig()
    assert (default.stall.empty_streak, default.stall.low_gain_streak) == (3, 4)
    flagged, ds = _until_stop(_stall_steps(9), default)
    # iterations 2-4 bring three empty answers: reflect; 5 is the grace call; 6-7 two more empty answers: stop
    assert flagged == [(4, "low_gain_streak", "reflect"), (7, "low_gain_streak", "stop")]
    assert "came back empty" in ds[3].reason
    # the same queries answered with one dull text (content, not "nothing"): the first is new, then the dull
    # streak of 4 applies (iterations 3-6)
    sc = Script()
    dull = [sc.step(("query_logs", {"window": f"last {k + 1} hours"}, "Logs are kept 30 days.")) for k in range(9)]
    flagged, _ = _until_stop(dull, default)
    assert flagged[0] == (6, "low_gain_streak", "reflect")
    # two empty answers, a new text (gain), the same text again (dull), then empty answers: the streak from
    # iteration 5 holds a dull answer, so it needs 4 (flagged at 8, not at 7 after three empty answers in a row)
    sc = Script()
    mixed = [sc.step(("query_logs", {"window": "w1"}, "[]")), sc.step(("query_logs", {"window": "w2"}, "[]"))]
    mixed.append(sc.step(("query_events", {"filter": "w3"}, "Logs are kept 30 days.")))
    mixed.append(sc.step(("query_events", {"filter": "w4"}, "Logs are kept 30 days.")))
    mixed += [sc.step(("query_logs", {"window": f"w{k}"}, "[]")) for k in range(5, 9)]
    flagged, _ = _until_stop(mixed, default)
    assert flagged[0] == (8, "low_gain_streak", "reflect")
