"""tune reads each run's results once for all its stall candidates (pyguard.tune.shared): the probes, and the policy
tune chooses, are those of one engine pass per candidate reading everything itself."""

import numpy as np
import pytest

from pyguard.base.errors import PyguardError
from pyguard.base.events import Observation, RunRecord, RunStart
from pyguard.engine import PolicyConfig
from pyguard.testing.synthetic import KINDS, generate
from pyguard.tune import SearchSpace, TuneOptions, tune
from pyguard.tune.probe import Prober, probe_config, probe_policy, probe_run
from pyguard.tune.shared import SharedReading
from pyguard.tune.space import stall_candidates
from pyguard.tune.synthetic import known_best_runs, tune_runs


def _two_turns() -> RunRecord:
    """A conversation: a first turn answered, then a user message opens a second turn (the novelty memory resets)."""
    a = generate("convergent", 3).events
    b = generate("divergent", 4).events
    user = Observation(kind="user", text="And the other order, 777?")
    second = [b[0].model_copy(update={"observations": (user,)}), *b[1:]]
    events = [e.model_copy(update={"index": i, "run_id": "two"}) for i, e in enumerate([*a, *second], start=1)]
    return RunRecord(start=RunStart(run_id="two"), events=events)


def _records() -> list[RunRecord]:
    kinds = [
        RunRecord(start=RunStart(run_id=f"{k}-{s}"), events=[e.model_copy(update={"run_id": f"{k}-{s}"}) for e in run])
        for k in KINDS
        for s in (0, 1)
        for run in [generate(k, s).events]
    ]
    return [*tune_runs(40, seed=3), *kinds, _two_turns()]


def _same(a, b) -> bool:
    return (
        a.stop == b.stop
        and np.array_equal(a.k, b.k)
        and np.array_equal(a.kind, b.kind)
        and np.array_equal(a.gain, b.gain)
    )


@pytest.mark.parametrize("per_turn", [True, False])
def test_shared_probes_equal_the_unshared_ones(per_turn):
    base = PolicyConfig(budget_per_turn=per_turn)
    configs = [probe_config(base, s) for s in stall_candidates(base, SearchSpace())]
    assert len(configs) > 10
    prober = Prober(configs)
    records = _records()
    stopped_early = 0
    for record in records:
        shared = prober.probes(record)
        alone = [probe_run(record, c) for c in configs]
        assert [_same(a, b) for a, b in zip(shared, alone, strict=True)] == [True] * len(configs), record.run_id
        stopped_early += len({p.stop for p in alone}) > 1  # candidates stopping at different calls share a prefix
    assert stopped_early >= 5


def test_a_reading_is_computed_once_per_run_and_shared():
    base = PolicyConfig()
    configs = [probe_config(base, s) for s in stall_candidates(base, SearchSpace())]
    record = tune_runs(3, seed=1)[0]
    reading = SharedReading()
    for config in configs:
        probe_run(record, config, reading, probe_policy(config))
    assert reading.computed == len(record.events)


def test_a_reading_refuses_another_run():
    config = probe_config(PolicyConfig(), {})
    one, other = tune_runs(2, seed=5)
    reading = SharedReading()
    probe_run(one, config, reading)
    with pytest.raises(PyguardError, match="other results"):
        probe_run(other, config, reading)


def test_tune_chooses_the_same_policy_as_one_unshared_pass_per_candidate(monkeypatch):
    """The tune suite's recovery workload (known_best_runs, the quick space, bound 0.01): the same policy and
    figures with the shared reading as with every candidate's engine reading every run itself."""
    options = TuneOptions(max_false_stop_rate=0.01, seed=0, space=SearchSpace.quick(), workers=1, bootstrap=200)
    records = known_best_runs(200, seed=0)
    shared = tune(records, options)

    def unshared(self, record):
        return [probe_run(record, c) for c in self.configs]

    monkeypatch.setattr(Prober, "probes", unshared)
    alone = tune(records, options)
    assert shared.policy == alone.policy
    assert shared.held_out == alone.held_out and shared.in_sample == alone.in_sample
    assert shared.engine_passes == alone.engine_passes and shared.verification_mismatches == 0
