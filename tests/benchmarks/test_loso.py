"""Leave-one-source-out: the fitting procedure on hand-made figures (where LOSO and in-sample must differ), and
``real_replay --quick --loso --json`` on the committed fixtures (shape, not values)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


@pytest.fixture
def loso_module(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import suites._loso as loso_module

    return loso_module


def _fig(false_stop_rate: float | None, saved: float | None, false_stops: int = 0) -> dict:
    return {
        "false_stop_rate": false_stop_rate,
        "failed_calls_saved": saved,
        "capped_stopped": None,
        "false_stops": false_stops,
    }


# Three sources, three candidates. "eager" saves the most and stops 5% of x's successful runs (0% elsewhere);
# "middle" stops 1% on every source and saves less; "cautious" never stops a successful run and saves least.
TABLE = {
    "cautious": {"x": _fig(0.0, 0.01), "y": _fig(0.0, 0.01), "z": _fig(0.0, 0.01)},
    "middle": {"x": _fig(0.01, 0.05, 1), "y": _fig(0.01, 0.05, 1), "z": _fig(0.01, 0.05, 1)},
    "eager": {"x": _fig(0.05, 0.30, 5), "y": _fig(0.0, 0.20), "z": _fig(0.0, 0.20)},
}


def test_in_sample_the_worst_source_rules_out_the_eager_candidate(loso_module) -> None:
    chosen = loso_module.choose(TABLE, ["x", "y", "z"], bound=0.02)
    assert chosen["candidate"] == "middle"
    assert chosen["admissible"] is True
    assert chosen["fold_worst_false_stop_rate"] == pytest.approx(0.01)


def test_leaving_out_the_source_it_hurts_picks_the_eager_candidate_and_shows_the_harm(loso_module) -> None:
    result = loso_module.loso(TABLE, ["x", "y", "z"], default="cautious", bound=0.02)
    x = result["sources"]["x"]
    assert result["in_sample_choice"]["candidate"] == "middle"
    assert x["in_sample"]["candidate"] == "middle" and x["in_sample"]["false_stop_rate"] == pytest.approx(0.01)
    # chosen on y and z only, "eager" looks harmless; measured on x it stops 5% of the successful runs
    assert x["loso"]["candidate"] == "eager" and x["loso"]["fold"]["fold_worst_false_stop_rate"] == 0.0
    assert x["loso"]["false_stop_rate"] == pytest.approx(0.05)
    # leaving out y or z keeps x in the fold, so "eager" stays out
    assert result["sources"]["y"]["loso"]["candidate"] == "middle"
    assert result["sources"]["z"]["loso"]["candidate"] == "middle"
    summary = result["summary"]
    assert summary["loso"]["worst_false_stops"] == {"source": "x", "false_stop_rate": pytest.approx(0.05)}
    assert summary["in_sample"]["worst_false_stops"]["false_stop_rate"] == pytest.approx(0.01)
    assert summary["loso"]["mean"]["false_stop_rate"] == pytest.approx((0.05 + 0.01 + 0.01) / 3)
    assert summary["default"]["mean"]["failed_calls_saved"] == pytest.approx(0.01)
    assert set(result["tradeoff"]) == set(TABLE)
    assert result["tradeoff"]["eager"]["mean"]["failed_calls_saved"] == pytest.approx(0.7 / 3)


def test_when_no_candidate_meets_the_bound_the_lowest_worst_source_is_chosen_and_said(loso_module) -> None:
    table = {
        "a": {"x": _fig(0.10, 0.5), "y": _fig(0.03, 0.5)},
        "b": {"x": _fig(0.04, 0.1), "y": _fig(0.04, 0.1)},
    }
    chosen = loso_module.choose(table, ["x", "y"], bound=0.02)
    assert chosen == {
        "candidate": "b",
        "admissible": False,
        "fold_worst_false_stop_rate": pytest.approx(0.04),
        "fold_mean_false_stop_rate": pytest.approx(0.04),
        "fold_mean_failed_calls_saved": pytest.approx(0.1),
    }


def test_ties_go_to_fewer_false_stops_then_to_the_earlier_candidate(loso_module) -> None:
    table = {
        "first": {"x": _fig(0.01, 0.2)},
        "second": {"x": _fig(0.0, 0.2)},
        "third": {"x": _fig(0.0, 0.2)},
    }
    assert loso_module.choose(table, ["x"])["candidate"] == "second"


def test_a_source_without_successful_runs_does_not_count_for_the_worst(loso_module) -> None:
    table = {"a": {"x": _fig(None, 0.4), "y": _fig(0.0, 0.2)}, "b": {"x": _fig(None, 0.1), "y": _fig(0.0, 0.1)}}
    assert loso_module.choose(table, ["x", "y"])["candidate"] == "a"


def test_candidates_are_the_policy_files_then_tunes_stall_candidates_without_duplicates(loso_module) -> None:
    from pyguard.engine import PolicyConfig

    files = loso_module.candidates(BENCH / "real_data" / "policies", space=False)
    names = [n for n, _ in files]
    assert names == sorted(p.stem for p in (BENCH / "real_data" / "policies").glob("*.toml"))
    assert dict(files)["2-default"] == PolicyConfig().model_dump()
    both = loso_module.candidates(BENCH / "real_data" / "policies", space=True)
    assert [n for n, _ in both][: len(names)] == names
    assert "tune:start" not in dict(both)  # the same config as 2-default: kept once, under its first name
    assert "tune:low_gain_streak=6" in dict(both)
    dumps = [d for _, d in both]
    assert all(dumps.count(d) == 1 for d in dumps)


def test_quick_real_replay_loso_json_is_well_formed() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "real_replay", "--quick", "--loso", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(out.stdout)
    loso = result["loso"]
    sources = {"fireact", "intercode-bash", "medagentbench", "mini-swe-agent", "tau2-gemma", "tau2-telecom"}
    assert set(loso["sources"]) == sources
    assert loso["candidates"][0] == "1-cautious" and "2-default" in loso["candidates"]
    for row in loso["sources"].values():
        assert set(row) == {"default", "in_sample", "loso"}
        assert row["loso"]["candidate"] in loso["candidates"]
        assert row["loso"]["fold"]["candidate"] == row["loso"]["candidate"]
        for column in row.values():
            rate = column["false_stop_rate"]
            assert rate is None or 0.0 <= rate <= 1.0
    for column in ("default", "in_sample", "loso"):
        assert set(loso["summary"][column]) == {"mean", "worst_false_stops"}
    for name in loso["candidates"]:
        assert set(loso["tradeoff"][name]) == sources | {"mean"}
    for source in result["sources"].values():
        reflection = source["reflection"]
        assert reflection["failed_stopped_after_reflection"] <= reflection["failed_stopped"]
        assert reflection["calls_saved_if_stopped_at_reflection"] >= reflection["calls_saved_by_those_stops"]


def test_a_switch_given_with_config_is_on_in_every_candidate(loso_module) -> None:
    policies = BENCH / "real_data" / "policies"
    plain = loso_module.candidates(policies, space=False)
    switched = loso_module.candidates(policies, space=False, overlay={"judge_results_early": True})
    assert [n for n, _ in switched] == [n for n, _ in plain] and len(plain) >= 3
    assert all(d["judge_results_early"] for _, d in switched)
    assert [{**d, "judge_results_early": True} for _, d in plain] == [d for _, d in switched]
