"""Resume an escalated run in a fresh process (run as a subprocess by test_guard_escalation.py; not a test module).

Usage: python resume_target.py HANDLE_FILE SCENARIO_FILE TRACE_DIR MESSAGE [streaming]
Prints the resumed run's result as one JSON object: run_id, outcome, answer, model_calls, decisions (rule per
decision), the observation kinds of each event."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pyguard.engine import EscalationConfig, PolicyConfig
from pyguard.escalation import EscalationHandle
from pyguard.jvm import scripted_model, start_jvm
from pyguard.jvm.streaming import scripted_streaming_model
from pyguard.live.guard import Guard

handle_file, scenario_file, trace_dir, message = sys.argv[1:5]
streaming = len(sys.argv) > 5 and sys.argv[5] == "streaming"
start_jvm()
handle = EscalationHandle.from_json(Path(handle_file).read_text(encoding="utf-8"))
scenario = json.loads(Path(scenario_file).read_text(encoding="utf-8"))
model = scripted_streaming_model(scenario) if streaming else scripted_model(scenario)
config = PolicyConfig(escalation=EscalationConfig(on_stall="escalate", resume_budget=4))
# the callback deadline only a guard against a hang (tests/conftest.py: HANG_GUARD_MS)
guard = Guard(config, trace_dir=trace_dir, callback_timeout_ms=600_000)
result = guard.resume(handle, message, model, agent="support-bot")
print(
    json.dumps(
        {
            "run_id": result.run_id,
            "outcome": str(result.outcome),
            "answer": result.answer,
            "model_calls": result.model_calls,
            "rules": [d.rule for d in result.decisions],
            "observations": [[o.kind for o in e.observations] for e in result.record.events],
            "trace_path": result.trace_path,
        }
    )
)
