"""Before the JVM starts, pyguard's own Java entry points raise JvmError saying what to call first, never JPype's
bare JVMNotRunning. Runs in a fresh interpreter: the test process may have a JVM already (one per xdist worker)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from pyguard.jvm.bootstrap import NOT_STARTED


def test_every_java_entry_point_before_start_jvm_says_what_to_call_first():
    code = textwrap.dedent(
        """
        import json
        from pyguard.live.guard import Guard
        from pyguard import jvm
        from pyguard.jvm import callback
        from pyguard.base.errors import JvmError

        calls = {
            "jclass": lambda: jvm.jclass("java.lang.String"),
            "callback proxy": lambda: jvm.CallbackAdapter(lambda event: None).java(),
            "callback error": lambda: callback._java_error(),
            "scripted_model": lambda: jvm.scripted_model("logistics_incident"),
            "demo_tools": lambda: jvm.demo_tools(),
            "scenario_tools": lambda: jvm.scenario_tools("logistics_incident"),
            "start_openai_server": lambda: jvm.start_openai_server("logistics_incident"),
            "Guard.run_scenario": lambda: Guard().run_scenario("convergent", "do the task"),
        }
        out = {}
        for name, call in calls.items():
            try:
                call()
                out[name] = "no error"
            except JvmError as e:
                out[name] = ["JvmError", str(e)]
            except Exception as e:
                out[name] = [type(e).__name__, str(e)]
        print(json.dumps({"calls": out, "started": jvm.jvm_started()}))
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["started"] is False
    assert out["calls"] == {name: ["JvmError", NOT_STARTED] for name in out["calls"]}, out["calls"]
    assert len(out["calls"]) == 8
    assert "pyguard.jvm.start_jvm() first" in NOT_STARTED and "jpype.JClass" in NOT_STARTED
