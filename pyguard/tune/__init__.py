"""``pyguard tune``: fit the guard's policy to a team's own labelled runs, with an honest held-out estimate.

    from pyguard.tune import TuneOptions, tune
    result = tune(load_runs("runs/"), TuneOptions(max_false_stop_rate=0.01, folds=5, seed=0))
    result.held_out.false_stop_rate, result.policy      # cross-validated figures; the fitted PolicyConfig (dict)

See :mod:`pyguard.tune.search` for the search and why, :mod:`pyguard.tune.simulate` for the exact budget
simulation, :mod:`pyguard.tune.tuner` for the cross-validation.
"""

from pyguard.tune.models import TuneOptions
from pyguard.tune.output import policy_toml, write_policy, write_report
from pyguard.tune.space import SearchSpace
from pyguard.tune.tuner import task_folds, tune

__all__ = ["SearchSpace", "TuneOptions", "policy_toml", "task_folds", "tune", "write_policy", "write_report"]
