"""maxIterations calibration from recorded (or live) runs: Aalen–Johansen c(n), expected cost, bootstrap.

    from pyguard.calibrate import calibrate_runs, make_config
    report = calibrate_runs(records, make_config(failure_cost=2.0, price_per_1k_tokens=0.003))
    report.task_types[0].recommended_max_iterations

See :mod:`pyguard.calibrate.calibration` for the method and :mod:`pyguard.calibrate.report` for the outputs.
"""

from pyguard.calibrate.calibration import calibrate_arrays, calibrate_runs, calibrate_task_type
from pyguard.calibrate.incidence import aalen_johansen, event_counts
from pyguard.calibrate.models import CalibrationConfig, CalibrationReport, make_config
from pyguard.calibrate.runs import UNTYPED, RunAccumulator, RunArrays, RunStatus, extract_runs, run_status

__all__ = [
    "UNTYPED",
    "CalibrationConfig",
    "CalibrationReport",
    "RunAccumulator",
    "RunArrays",
    "RunStatus",
    "aalen_johansen",
    "calibrate_arrays",
    "calibrate_runs",
    "calibrate_task_type",
    "event_counts",
    "extract_runs",
    "make_config",
    "run_status",
]
