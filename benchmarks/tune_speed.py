"""``tune``'s time in one tree: ``PYTHONPATH=TREE python benchmarks/tune_speed.py RUNS WORKERS`` (from TREE).

The tune suite's timing step (``tune`` on ``RUNS`` :func:`pyguard.tune.synthetic.tune_runs` runs, the default search
space, bound 0.01, ``WORKERS`` worker processes), wall and CPU seconds (this process and its workers), the load
average at the start and the end, and the policy chosen, as one JSON line. Run it in an earlier checkout and in this
one, alternately, to compare them in one run (docs/performance.md): on a shared machine compare the CPU seconds, and
the policies, which must be the same.
"""

import json
import os
import resource
import sys
import time

import scipy.stats  # noqa: F401  # imported before timing in both trees

from pyguard.tune import SearchSpace, TuneOptions, tune
from pyguard.tune.synthetic import tune_runs

n = int(sys.argv[1])
workers = int(sys.argv[2])
records = tune_runs(n, seed=0)
load0 = os.getloadavg()
c0 = time.process_time()
ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.perf_counter()
r = tune(records, TuneOptions(max_false_stop_rate=0.01, workers=workers, space=SearchSpace()))
el = time.perf_counter() - t0
ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = time.process_time() - c0 + (ch1.ru_utime + ch1.ru_stime) - (ch0.ru_utime + ch0.ru_stime)
print(
    json.dumps(
        {
            "tree": os.getcwd(),
            "runs": n,
            "workers": workers,
            "seconds": round(el, 2),
            "cpu_seconds": round(cpu, 2),
            "load_start": load0,
            "load_end": os.getloadavg(),
            "engine_passes": r.engine_passes,
            "policy": r.policy,
            "stall": r.stall,
            "held_out_fsr": r.held_out.false_stop_rate.value if r.held_out else None,
            "mismatches": r.verification_mismatches,
        },
        sort_keys=True,
    )
)
