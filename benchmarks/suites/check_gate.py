"""False-alarm rate and power of ``pyguard check``'s baseline comparison, on synthetic run sets.

``python benchmarks/run.py check_gate`` (2,000 pairs per size and case) or ``--quick`` (300 pairs).

Each trial draws a baseline run set and a current run set of ``runs`` runs each (one task type) from
:mod:`pyguard.check.synthetic` and runs the whole gate (:func:`pyguard.check.evaluate`: every baseline test, Holm
across them, family-wise ``alpha``), exactly as ``pyguard check --baseline`` does after reading the runs.

- false alarm: both sets from the reference behaviour (10% stalled, 5% expired, 5% failed); the share of gates
  that fail should be at most ``alpha``;
- power: the current set's stall rate doubled (10% -> 20%, a prompt change that makes the agent stall more;
  the success rate drops by as much, and stalled runs are longer); the share of gates that fail. Also reported:
  the share where the stall-rate check itself fails (the check that names the cause).

Intervals are Wilson 95% intervals (scipy) on the share over the trials. Trials are seeded per size and case.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binomtest

from pyguard.check import GateConfig, evaluate
from pyguard.check.synthetic import BASE, synth_summary

SIZES = (200, 300, 500)
TRIALS = {True: 300, False: 2000}
ALPHA = 0.05
SHIFT = {"stalled": 0.20}
STALL_CHECK = "baseline.stalled_rate"


def _trials(runs: int, trials: int, seed: int, shift: dict[str, float], config: GateConfig) -> tuple[int, int]:
    """(gates failed, stall-rate checks failed) over ``trials`` baseline/current pairs."""
    rng = np.random.default_rng([seed, runs])
    gates = stall = 0
    for _ in range(trials):
        baseline = synth_summary(rng, runs)
        current = synth_summary(rng, runs, **shift)
        report = evaluate(current, config, baseline)
        gates += not report.passed
        stall += any(c.name == STALL_CHECK and not c.passed for c in report.checks)
    return gates, stall


def _share(k: int, n: int) -> dict:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return {"rate": k / n, "ci": [round(ci.low, 4), round(ci.high, 4)]}


def run(quick: bool) -> dict:
    trials = TRIALS[quick]
    config = GateConfig(alpha=ALPHA)
    sizes = []
    for runs in SIZES:
        alarms, _ = _trials(runs, trials, 1, {}, config)
        caught, stall_caught = _trials(runs, trials, 2, SHIFT, config)
        fa, pw, ps = _share(alarms, trials), _share(caught, trials), _share(stall_caught, trials)
        sizes.append(
            {
                "runs": runs,
                "false_alarm_rate": fa["rate"],
                "false_alarm_ci": fa["ci"],
                "power": pw["rate"],
                "power_ci": pw["ci"],
                "power_stall_check": ps["rate"],
                "power_stall_check_ci": ps["ci"],
            }
        )
    return {
        "sizes": sizes,
        "alpha": ALPHA,
        "trials": trials,
        "behaviour": {o.value: p for o, p in BASE.items()},
        "shift": dict(SHIFT),
        "command": "python benchmarks/run.py check_gate" + (" --quick" if quick else ""),
    }


def render(result: dict, console) -> None:  # noqa: ANN001
    from rich.table import Table

    table = Table(
        title=f"pyguard check vs baseline: {result['trials']} pairs per cell, alpha {result['alpha']} "
        f"(family-wise, Holm), stall rate {result['behaviour']['stalled']:.0%} -> "
        f"{result['shift']['stalled']:.0%}"
    )
    for col in ("runs per set", "false alarms", "95% CI", "power (gate)", "95% CI", "power (stall check)"):
        table.add_column(col, justify="right")
    for s in result["sizes"]:
        table.add_row(
            str(s["runs"]),
            f"{s['false_alarm_rate']:.3f}",
            f"{s['false_alarm_ci'][0]:.3f}-{s['false_alarm_ci'][1]:.3f}",
            f"{s['power']:.3f}",
            f"{s['power_ci'][0]:.3f}-{s['power_ci'][1]:.3f}",
            f"{s['power_stall_check']:.3f}",
        )
    console.print(table)
    console.print(f"{result['machine']['cpus']} CPUs, {result['machine']['python']}; {result['command']}", markup=False)
