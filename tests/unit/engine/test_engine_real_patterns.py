"""The patterns found in real agents' recorded runs (issue: the guard on real agents), each as an engine test:
conversation turns, edit-then-re-run (in test_engine_stall), rephrased failing lookups, polling with volatile
fields (in test_engine_stall), large results with a modest new share, long productive work, and an echo written
another way than the argument."""

from __future__ import annotations

import json
import random

from engine_support import Script

from pyguard.base.decisions import Action
from pyguard.base.events import IterationEvent, Observation, opens_turn
from pyguard.engine import Policy, PolicyConfig


def _run(events, config=None):
    session = Policy(config or PolicyConfig()).new_run("r1")
    decisions = []
    for ev in events:
        decisions.append(session.observe(ev))
        if decisions[-1].stops:
            break
    return session, decisions


def _record(k: int) -> str:
    rng = random.Random(k)
    return json.dumps(
        {
            "customer": f"C-{k:04d}",
            "orders": [
                {
                    "id": rng.randint(10**5, 10**6),
                    "item": rng.choice(["lamp", "desk", "chair", "shelf", "rug", "sofa"]),
                    "total": round(rng.uniform(5, 500), 2),
                }
                for _ in range(3)
            ],
        }
    )


def test_a_user_message_after_an_answer_opens_a_new_turn():
    first = IterationEvent(run_id="r", index=1, text="hello")
    tool = IterationEvent(run_id="r", index=1, tool_calls=())
    again = IterationEvent(run_id="r", index=2, observations=(Observation(kind="user", text="and now?"),))
    assert opens_turn(first, again)
    assert not opens_turn(None, again)
    not_final = first.model_copy(
        update={"tool_calls": (__import__("pyguard.base.events", fromlist=["ToolCall"]).ToolCall(name="t"),)}
    )
    assert not opens_turn(not_final, again)
    assert not opens_turn(tool, IterationEvent(run_id="r", index=2))


def test_each_turn_of_a_conversation_gets_its_own_budget():
    """Five turns of five productive-looking but low-gain lookups each (25+ calls): never cut, since each turn is
    within the base budget; the whole run at once would be."""
    sc = Script()
    events = []
    for turn in range(5):
        for k in range(5):
            events.append(sc.step(("get_order", {"id": f"{turn}-{k}"}, "Order status: processing. " * 3 + f"#{k}")))
        events.append(sc.answer(f"answer {turn}"))
        sc.user(f"Thanks. Next question number {turn}: what about my other orders?")
    s, ds = _run(events)
    assert not any(d.stops for d in ds), [(d.iteration, d.reason) for d in ds if d.stops]
    assert s.turn == 5 and ds[-1].turn == 5
    whole = PolicyConfig(budget_per_turn=False)
    _, ds_whole = _run(events, whole)
    assert any(d.stops for d in ds_whole)


def test_caps_hold_across_turns():
    sc = Script()
    events = []
    for turn in range(4):
        for k in range(3):
            events.append(sc.step(("get_order", {"id": f"{turn}-{k}"}, _record(10 * turn + k)), total_tokens=1000))
        events.append(sc.answer(f"answer {turn}", total_tokens=1000))
        sc.user(f"And the next one, {turn}?")
    config = PolicyConfig.model_validate({"caps": {"max_total_tokens": 9000}})
    _, ds = _run(events, config)
    assert ds[-1].stops and ds[-1].rule == "cap:total_tokens" and ds[-1].iteration == 9


def test_a_loop_inside_one_turn_is_still_caught():
    sc = Script()
    events = [sc.step(("get_order", {"id": "A"}, _record(1))), sc.answer("first answer")]
    sc.user("What about order B?")
    events += [sc.step(("get_order", {"id": "B"}, _record(2)))] + [
        sc.step(("get_order", {"id": "B"}, _record(2))) for _ in range(6)
    ]
    _, ds = _run(events)
    assert ds[-1].stops and ds[-1].turn == 2


def test_rephrased_failing_lookups_bring_no_gain():
    sc = Script()
    queries = ["Scat", "Scatman", "Scatman John", "Scatman singer", "Scatman John singer", "John Larkin Scatman"]
    similar = ["Scat singing", "Scatman John", "Scatman (song)", "Scatman's World", "Ella Fitzgerald", "Scat Cat"]
    events = []
    for k, q in enumerate(queries):
        rng = random.Random(k)
        items = rng.sample(similar, 4)
        events.append(sc.step(("search", {"entity": q}, f"Could not find [{q}]. Similar: {items}.")))
    s, ds = _run(events)
    flagged = [d for d in ds if d.action is not Action.CONTINUE]
    assert flagged and flagged[0].rule == "same_answer" and flagged[0].iteration == 4
    assert s.gains[2:4] == [0.0, 0.0]


def test_a_large_result_with_a_modest_new_share_is_productive():
    rng = random.Random(7)
    vocab = [f"w{j}" for j in range(3000)]
    page = [" ".join(rng.choice(vocab) for _ in range(12)) for _ in range(160)]  # ~10 KB of lines
    sc = Script()
    events = []
    for k in range(14):
        for j in rng.sample(range(len(page)), 22):  # ~14% of the lines new each time
            page[j] = " ".join(rng.choice(vocab) for _ in range(12))
        events.append(sc.step(("read_page", {"n": k}, "\n".join(page))))
    events.append(sc.answer())
    s, ds = _run(events)
    assert not any(d.stops for d in ds), [(d.iteration, d.reason) for d in ds if d.stops]
    assert min(s.gains[2:]) >= PolicyConfig().earn_threshold


def test_an_error_echoing_its_argument_in_another_form_is_one_error():
    sc = Script()
    events = []
    for k in range(5):
        region = ["eu-west-1", "euwest1", "EU_WEST_1"][k % 3]
        events.append(
            sc.step(
                (
                    "create_bucket",
                    {"region": region},
                    "Error: region eu-west-1 is not enabled for arn:aws:s3:eu-west-1:acct/logs",
                ),
                error=True,
            )
        )
    s, ds = _run(events)
    assert s.gains[2:] == [0.0] * (len(s.gains) - 2)  # not 0.3 / 0 alternating: one error, however echoed
    assert ds[2].action is Action.REFLECT and ds[-1].stops and ds[-1].iteration == 4


def test_fields_named_as_volatile_are_masked_whatever_their_value():
    from pyguard.engine.novelty import prepare_text

    a = prepare_text('{"status": "PENDING", "elapsed_ms": 345678, "request_id": "r-1", "rows": 12, "took": 1.5}')
    b = prepare_text('{"status": "PENDING", "elapsed_ms": 901, "request_id": "r-2", "rows": 12, "took": 0.25}')
    assert a == b and '"rows": 12' in a
    assert prepare_text('{"rows": 12}') != prepare_text('{"rows": 13}')  # an ordinary count is information


def test_a_large_page_fetched_again_with_only_a_request_id_changed_is_a_poll():
    rng = random.Random(3)
    page = "\n".join(" ".join(f"w{rng.randrange(3000)}" for _ in range(12)) for _ in range(160))
    sc = Script()
    events = [sc.step(("browse", {"url": "https://shop/p3"}, page + f"\nrequest abc{k:03d}")) for k in range(16)]
    s, ds = _run(events)
    flagged = [d for d in ds if d.action is not Action.CONTINUE]
    assert flagged and flagged[0].rule == "polling_limit", [(d.iteration, d.rule) for d in flagged]
    assert ds[-1].stops


def test_a_short_failure_naming_related_titles_is_one_answer_whatever_the_titles():
    # the titles share no word with the request, yet a short message that echoes the request and lists quoted
    # titles says the same thing each time: the third such answer in a row is a stall
    sc = Script()
    titles = ["'Amber Dune (faq)'", "'Cobalt Fjord (policy)'", "'Basalt Ember (general)'", "'Dune Fjord (faq)'"]
    queries = ["why is sync failing", "sync root cause", "sync known issue", "how to fix sync", "sync variant 5"]
    events = []
    for k, q in enumerate(queries):
        related = ", ".join(random.Random(k).sample(titles, 2))
        events.append(sc.step(("search_kb", {"query": q}, f"No article matches {q} exactly. Related: {related}.")))
    s, ds = _run(events)
    flagged = [d for d in ds if d.action is not Action.CONTINUE]
    assert flagged and flagged[0].rule == "same_answer" and flagged[0].iteration == 4


def test_records_and_long_results_keep_their_quoted_content():
    from pyguard.engine.templates import SHORT_PROSE_CHARS, request_words, template_key

    def key(text: str, arg: str) -> str | None:
        from pyguard.engine.novelty import prepare_text

        return template_key(prepare_text(text, (arg,), True), request_words((arg,)))

    # JSON records of two customers: the city is content, not part of the request
    assert key('{"name": "alice", "city": "paris"}', "alice") != key('{"name": "bob", "city": "rome"}', "bob")
    # a long prose answer quoting what it found is content too; the same answer kept short is a message
    pad = " the entry was last reviewed by the archive team" * (SHORT_PROSE_CHARS // 40)
    a, b = "Found kepler in the catalogue: 'Ocean Blue Street'.", "Found marlow in the catalogue: 'Granite Hill Road'."
    assert key(a + pad, "kepler") != key(b + pad, "marlow")
    assert key(a, "kepler") == key(b, "marlow") is not None


def test_a_request_taken_from_the_flagged_answers_suggestions_is_waited_for_once():
    # the third miss suggests 'Scatman John'; the model asks for it next: the same-answer flag waits for that result
    sc = Script()
    misses = [
        ("Scat", "Could not find [Scat]. Similar: ['Scat singing', 'Scat Cat']."),
        ("Scatman", "Could not find [Scatman]. Similar: ['Scatman (song)', 'Scat Cat']."),
        ("Scat singer", "Could not find [Scat singer]. Similar: ['Scatman John', 'Scat singing']."),
    ]
    events = [sc.step(("search", {"entity": q}, text)) for q, text in misses]
    found = sc.step(("search", {"entity": "Scatman John"}, "Scatman John (born 1942 in El Monte) was a musician."))
    s, ds = _run([*events, found, sc.answer()])
    assert [d for d in ds if d.action is not Action.CONTINUE] == []
    # the same run asking for a word of its own instead is flagged at the third same answer
    sc = Script()
    events = [sc.step(("search", {"entity": q}, text)) for q, text in misses]
    other = sc.step(("search", {"entity": "Scat musician"}, "Could not find [Scat musician]. Similar: ['Scat Cat']."))
    s, ds = _run([*events, other, sc.answer()])
    flagged = [d for d in ds if d.action is not Action.CONTINUE]
    assert flagged and flagged[0].rule == "same_answer" and flagged[0].iteration == 4
    # waited for once per streak: the suggestion missed too, the next same answer is flagged
    sc = Script()
    events = [sc.step(("search", {"entity": q}, text)) for q, text in misses]
    miss = sc.step(
        ("search", {"entity": "Scatman John"}, "Could not find [Scatman John]. Similar: ['Scat Cat', 'Scat singing'].")
    )
    last = sc.step(("search", {"entity": "Scat Cat"}, "Could not find [Scat Cat]. Similar: ['Scat']."))
    s, ds = _run([*events, miss, last, sc.answer()])
    flagged = [d for d in ds if d.action is not Action.CONTINUE]
    assert flagged and flagged[0].rule == "same_answer" and flagged[0].iteration == 5


def test_a_refused_write_reworded_each_time_is_the_same_answer():
    # a write the tool refuses (an error: nothing changed) with its argument reworded each time: the failure says
    # the same about every request, as a failing lookup's would; a write that succeeds is a receipt, never flagged
    def refused(k: int):
        return (
            "modify_order_address",
            {"order_id": "W1", "zip": f"85004-{k}"},
            f"Error: zip code '85004-{k}' is not valid",
        )

    sc = Script()
    events = [sc.step(refused(k), error=True) for k in range(1, 5)]
    s, ds = _run(events)
    flagged = [d for d in ds if d.action is not Action.CONTINUE]
    assert flagged and flagged[0].rule == "same_answer" and flagged[0].iteration == 4
    sc = Script()
    done = [
        sc.step(("modify_order_address", {"order_id": f"W{k}", "zip": "85004"}, f"Order 'W{k}' updated: zip '85004'."))
        for k in range(1, 5)
    ]
    s, ds = _run(done)
    assert all(d.rule != "same_answer" for d in ds)
