"""The τ²-bench importer's task type: the task id's ``[…]`` prefix, else the domain the results file names, never
the task id itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pyguard.loading import load_runs
from pyguard.trace.tau2_import import parse_tau2

REAL = Path(__file__).parents[2] / "data" / "real"


def _simulation(task_id: str, sim_id: str) -> dict[str, Any]:
    """A two-message simulation written for this test (τ²-bench's shape, nothing copied)."""
    return {
        "id": sim_id,
        "task_id": task_id,
        "trial": 0,
        "termination_reason": "user_stop",
        "reward_info": {"reward": 1.0},
        "messages": [
            {"role": "user", "content": "Where is my parcel?"},
            {"role": "assistant", "content": "It arrives tomorrow."},
        ],
    }


def _file(domain: str | None, *task_ids: str) -> dict[str, Any]:
    info = {"environment_info": {"domain_name": domain}} if domain is not None else {}
    sims = [_simulation(t, f"sim-{i}") for i, t in enumerate(task_ids)]
    return {"info": info, "tasks": [], "simulations": sims}


def test_student_domain_without_prefixes_takes_the_domain_its_file_names() -> None:
    runs = load_runs(REAL / "tau2-gemma" / "fishtrader_gemma-3-27b.json")
    assert len(runs) == 3
    assert {r.run_id.split("#")[0] for r in runs} == {
        "fishtrader_01_register_customer",
        "fishtrader_02_show_catalog",
        "fishtrader_15_inactive_customer_order_denied",
    }
    assert {r.start.task_type for r in runs} == {"fishtrader_garbich"}


def test_task_id_prefix_wins_over_the_files_domain() -> None:
    runs = load_runs(REAL / "tau2-telecom" / "telecom-workflow_grok-3.json")
    assert len(runs) == 4
    assert {r.start.task_type for r in runs} == {"mobile_data_issue"}  # the file names "telecom-workflow"


@pytest.mark.parametrize(
    ("domain", "task_id", "expected"),
    [
        ("parcels", "[tracking]late_parcel", "tracking"),
        ("parcels", "0", "parcels"),
        ("parcels", "parcels_07_refund", "parcels"),
        ("parcels", "[]7", "parcels"),
        ("parcels", "late]7", "parcels"),
        (None, "0", None),
        ("  ", "12", None),
    ],
)
def test_a_bare_task_id_is_never_a_task_type(domain: str | None, task_id: str, expected: str | None) -> None:
    (record,) = parse_tau2([(None, _file(domain, task_id))], source="mem.json")
    assert record.start.task_type == expected


def test_a_simulation_read_alone_has_no_domain() -> None:
    records = parse_tau2([(None, _simulation("3", "a")), (None, _simulation("[billing]x", "b"))], source="sims.jsonl")
    assert [r.start.task_type for r in records] == [None, "billing"]
