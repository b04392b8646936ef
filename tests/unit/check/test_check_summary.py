import json

import pytest
from pydantic import ValidationError

from pyguard.base.errors import InputError
from pyguard.base.events import Outcome
from pyguard.check import (
    ALL_TASKS,
    UNTYPED,
    RunFacts,
    RunSetSummary,
    TaskTypeFigures,
    baseline_json,
    read_baseline,
    summarize,
    write_baseline,
)


def _facts():
    return [
        RunFacts(run_id="a1", task_type="a", outcome=Outcome.SUCCEEDED, iterations=2, tokens=100),
        RunFacts(run_id="a2", task_type="a", outcome=Outcome.STALLED, iterations=7, tokens=900),
        RunFacts(run_id="b1", task_type="b", outcome=Outcome.EXPIRED, iterations=12, tokens=None),
        RunFacts(run_id="n1", task_type=None, outcome=Outcome.SUCCEEDED, iterations=1, tokens=50),
    ]


def test_summary_counts_per_task_type_and_overall():
    s = summarize(_facts())
    assert s.task_types == [UNTYPED, "a", "b"]
    assert s.overall.n == 4
    assert s.overall.count(Outcome.SUCCEEDED) == 2
    assert s.groups["a"].rate(Outcome.STALLED) == 0.5
    assert s.groups["a"].iterations == {2: 1, 7: 1}
    assert s.groups["b"].tokens == [] and s.groups["b"].tokens_mean is None
    assert s.overall.tokens == [50, 100, 900]
    assert s.overall.tokens_mean == pytest.approx(350.0)


def test_percentiles_are_observed_values():
    g = TaskTypeFigures.from_arrays([Outcome.SUCCEEDED] * 20, list(range(1, 21)), [None] * 20)
    assert g.iterations_p50 == 10
    assert g.iterations_p95 == 19  # at least 95% of the 20 runs used at most 19 calls
    assert g.iterations_mean == pytest.approx(10.5)


@pytest.mark.parametrize(
    "data, message",
    [
        (dict(n=2, outcomes={"succeeded": 1}, iterations={3: 2}), "outcome counts add up to 1"),
        (dict(n=1, outcomes={"succeeded": 1}, iterations={3: 2}), "iteration histogram adds up to 2"),
        (dict(n=1, outcomes={"succeeded": 1}, iterations={3: 1}, tokens=[1, 2]), "2 token totals"),
        (dict(n=1, outcomes={"bogus": 1}, iterations={3: 1}), "bogus"),
    ],
)
def test_incoherent_groups_are_refused(data, message):
    with pytest.raises(ValidationError, match=message):
        TaskTypeFigures.model_validate(data)


def test_baseline_round_trips(tmp_path):
    s = summarize(_facts())
    path = write_baseline(s, tmp_path / "sub" / "baseline.json")
    back = read_baseline(path)
    assert back == s
    assert baseline_json(back) == path.read_text()
    data = json.loads(path.read_text())
    assert data["format"] == "pyguard-check-baseline" and data["version"] == 1
    assert data["groups"]["a"]["outcomes"]["stalled"] == 1  # counts, not only rates
    assert data["groups"][ALL_TASKS]["n"] == 4


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "is not JSON"),
        ('{"groups": {}}', "is not a pyguard check baseline"),
        ('{"format": "pyguard-check-baseline", "version": 1, "groups": {}}', "all runs"),
        ('{"format": "pyguard-check-baseline", "version": 9, "groups": {}}', "version"),
        (
            '{"format": "pyguard-check-baseline", "version": 1, "groups": {"*": {"n": 3, "outcomes": {}, '
            '"iterations": {}}}}',
            "groups.\\*",
        ),
    ],
)
def test_malformed_baselines_name_the_file_and_the_fault(tmp_path, text, message):
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_baseline(path)
    assert "b.json" in str(info.value) and "--write-baseline" in str(info.value)


def test_missing_baseline_says_how_to_make_one(tmp_path):
    with pytest.raises(InputError, match="cannot read the baseline .*nope.json.*--write-baseline"):
        read_baseline(tmp_path / "nope.json")


def test_summary_requires_the_overall_group():
    with pytest.raises(ValidationError, match="all runs"):
        RunSetSummary(groups={})


def test_the_old_name_of_a_task_types_figures_still_works_with_a_warning():
    import pyguard.check

    with pytest.warns(DeprecationWarning, match="TaskTypeFigures"):
        assert pyguard.check.GroupSummary is TaskTypeFigures
