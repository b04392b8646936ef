"""Failure templates across the turn: a result that says what an earlier failure said (echoed arguments masked) brings
no new information wherever it falls, not only in a row; the count starts again on real progress."""

from __future__ import annotations

from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.engine import Policy, PolicyConfig


def _run(events, config=None):
    session = Policy(config or PolicyConfig()).new_run("r1")
    decisions = []
    for ev in events:
        decisions.append(session.observe(ev))
        if decisions[-1].stops:
            break
    return session, decisions


def _miss(sc: Script, q: str):
    return sc.step(("search", {"entity": q}, f"Could not find [{q}]. Similar: ['{q} (film)', '{q} (band)']."))


def _no_result(sc: Script, k: int):
    return sc.step(("lookup", {"keyword": f"year {1900 + k}"}, "No Results"))


def test_reworded_misses_interleaved_with_other_lookups_are_one_stall():
    # search miss, lookup nothing, search miss, lookup nothing, search miss: never three misses in a row
    sc = Script()
    events = []
    for k, q in enumerate(["Scat", "Scatman", "Scat singer"]):
        events.append(_miss(sc, q))
        events.append(_no_result(sc, k))
    s, ds = _run([*events, sc.answer()])
    flagged = [d for d in ds if d.action is not Action.CONTINUE]
    assert flagged and flagged[0].rule == "same_answer", [(d.iteration, d.rule) for d in flagged]
    # the third miss is the one flagged (its result arrives with call 6): the hit is about it
    assert flagged[0].evidence["flags"][0]["requests"] == 3


def test_real_progress_in_between_starts_the_count_again():
    sc = Script()
    events = [_miss(sc, "Scat"), _miss(sc, "Scatman")]
    events.append(sc.step(("search", {"entity": "Scatman John"}, "Scatman John (1942-1999) was a jazz musician.")))
    events += [_miss(sc, "Scat singer"), _no_result(sc, 1)]
    s, ds = _run([*events, sc.answer()])
    assert not [d for d in ds if d.rule == "same_answer"], [(d.iteration, d.rule) for d in ds if d.rule]


def _queries(text: str, n: int = 4):
    sc = Script()
    spellings = ["LIKE '%Republic%'", "REGEXP '[rR]epublic'", "RLIKE 'public$'", "IN (SELECT f FROM republics)"]
    events = [sc.step(("sql", {"command": "SHOW TABLES"}, "[('city',), ('country',)]"))]
    for where in spellings[:n]:
        events.append(sc.step(("sql", {"command": f"SELECT COUNT(*) FROM country WHERE GovernmentForm {where}"}, text)))
    return [*events, sc.answer("143")]


def test_the_same_rows_for_reworded_queries_are_the_same_answer():
    # four spellings of one filter, one count: the rows say nothing the first query did not
    _, ds = _run(_queries("[(143,)]"))
    flagged = [(d.iteration, d.rule) for d in ds if d.action is not Action.CONTINUE]
    assert flagged and flagged[0][1] == "same_answer", flagged
    assert ds[[d.iteration for d in ds].index(flagged[0][0])].evidence["flags"][0]["requests"] == 3


def test_the_same_prose_for_reworded_requests_is_left_to_its_template():
    # a prose message with nothing tied to the request is a dull result (a low-information streak), not an answer
    _, ds = _run(_queries("Query OK: one value returned."))
    assert not any(d.rule == "same_answer" for d in ds), [(d.iteration, d.rule) for d in ds]
