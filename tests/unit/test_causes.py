"""Issue 24: the causes of a run's ending are declared once, as pyguard.base.ending.Causes: finish_arguments returns it,
settle, end_from_events, RunSession.finish and GuardedRun._finish take it. RunSession.finish still takes the causes
as keywords, read into the type in one place (Causes.of)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

from pyguard.base.ending import Causes, settle
from pyguard.base.errors import ConfigError
from pyguard.base.events import Outcome
from pyguard.engine import Policy, PolicyConfig

ROOT = Path(__file__).resolve().parents[2]


def session():
    return Policy(PolicyConfig(), clock=lambda: 0.0).new_run(run_id="r")


def test_causes_round_trip():
    causes = Causes(answer="a", failed="f", verified=False, cancelled=True, guard_error="g", expired="x")
    causes = causes.model_copy(update={"engine_gave_up": "late", "ended": "s"})
    assert Causes.model_validate(causes.model_dump()) == causes
    assert Causes.model_validate_json(causes.model_dump_json()) == causes
    assert Causes.model_validate(Causes().model_dump()) == Causes()


def test_causes_are_frozen():
    causes = Causes(answer="a")
    with pytest.raises(ValidationError):
        causes.answer = "b"  # type: ignore[misc]


def test_an_unknown_cause_is_refused_naming_it_and_the_call():
    with pytest.raises(ConfigError) as err:
        session().finish(anwser="done")
    message = str(err.value)
    assert message.startswith("RunSession.finish: unknown cause 'anwser' (did you mean 'answer'?)")
    assert "the causes are answer, failed, verified, cancelled, guard_error, expired, engine_gave_up, ended" in message
    with pytest.raises(ValueError, match="anwser"):
        Causes(anwser="done")  # type: ignore[call-arg]


def test_a_bad_value_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"RunSession.finish: cancelled='yes' is refused: input should be a valid"):
        session().finish(cancelled="yes")
    with pytest.raises(ConfigError, match=r"verified='no' is refused"):
        session().finish(answer="a", verified="no")


def test_something_else_than_causes_positionally_is_refused():
    with pytest.raises(ConfigError, match=r"RunSession.finish: 'done' is not a pyguard.base.ending.Causes"):
        session().finish("done")


def test_the_object_and_keywords_settle_alike_and_a_keyword_wins():
    by_object = session().finish(Causes(answer="done", verified=False))
    by_keywords = session().finish(answer="done", verified=False)
    expected = (Outcome.FAILED, "the verifier rejected the answer")
    assert (by_object.outcome, by_object.reason) == (by_keywords.outcome, by_keywords.reason) == expected
    assert Causes.of("f", Causes(answer="a", cancelled=True), {"answer": "b"}) == Causes(answer="b", cancelled=True)
    assert Causes.of("f", None, {}) == Causes()


def test_an_exception_is_read_as_its_text():
    end = session().finish(failed=ValueError("boom"))
    assert (end.outcome, end.reason) == (Outcome.FAILED, "the run failed: boom")
    assert Causes(guard_error=RuntimeError("late")).guard_error == "late"  # type: ignore[arg-type]


def test_settle_takes_the_causes_and_the_engines_stop_beside_them():
    causes = Causes(answer="a", cancelled=True)
    assert settle(causes) == (Outcome.CANCELLED, "cancelled")
    assert settle(causes, stop=(Outcome.STALLED, "stuck")) == (Outcome.STALLED, "stuck")


def test_no_function_declares_the_causes_again():
    """A function with three or more of the causes as its own parameters is a second declaration of them: take a
    Causes instead."""
    names = set(Causes.model_fields)
    found = []
    for path in sorted((ROOT / "pyguard").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                own = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]} & names
                if len(own) >= 3:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}{sorted(own)}")
    assert found == []


def test_each_cause_has_one_name():
    assert set(Causes.model_fields) == {
        "answer",
        "failed",
        "verified",
        "cancelled",
        "guard_error",
        "expired",
        "engine_gave_up",
        "ended",
    }


@pytest.mark.parametrize(
    "old, new",
    [
        ({"error": "boom"}, {"failed": "the run failed: boom"}),
        ({"guard_failed": "late", "answer": "a"}, {"engine_gave_up": "late", "answer": "a"}),
        ({"answered": True, "succeeded": "recorded"}, {"ended": "recorded"}),
        ({"answered": True}, {"ended": "the model answered"}),
        ({"answered": False, "answer": "a"}, {"failed": "the run ended without an answer", "answer": "a"}),
    ],
)
def test_the_old_names_still_settle_alike_with_a_deprecation_warning(old, new):
    with pytest.warns(DeprecationWarning, match="deprecated"):
        by_old = Causes(**old)
    assert by_old == Causes(**new)
    assert settle(by_old) == settle(Causes(**new))
    with pytest.warns(DeprecationWarning, match=f"the cause {next(iter(old))!r}|the cause"):
        end = session().finish(**old)
    assert (end.outcome, end.reason) == settle(Causes(**new))
