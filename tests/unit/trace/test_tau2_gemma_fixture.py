"""The τ²-bench importer on conversations of another agent in a domain nobody here wrote (tests/data/real/tau2-gemma)."""

from __future__ import annotations

import json
from pathlib import Path

from pyguard.loading import detect_format, load_runs

FIXTURE = Path(__file__).parents[2] / "data" / "real" / "tau2-gemma" / "fishtrader_gemma-3-27b.json"


def test_student_domain_conversations_import_with_their_rewards() -> None:
    assert detect_format(FIXTURE) == "tau2"
    runs = {r.run_id.split("#")[0]: r for r in load_runs(FIXTURE, terminal_tools=["transfer_to_human_agents"])}
    assert sorted(runs) == [
        "fishtrader_01_register_customer",
        "fishtrader_02_show_catalog",
        "fishtrader_15_inactive_customer_order_denied",
    ]
    failed = runs["fishtrader_01_register_customer"]
    assert failed.end.success_label is False and not failed.end.censored
    registers = [c.arguments for e in failed.events for c in e.tool_calls if c.name == "register_customer"]
    assert len(registers) == 2 and all(json.loads(a) for a in registers)
    ok = runs["fishtrader_02_show_catalog"]
    assert ok.end.success_label is True and len(ok.events) == 13
    assert [c.name for e in ok.events for c in e.tool_calls][:2] == ["show_catalog", "check_stock"]
    user_turns = [i for i, e in enumerate(ok.events) if any(o.kind == "user" for o in e.observations)]
    assert len(user_turns) >= 2
