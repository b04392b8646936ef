"""The shared base of both wings: the one error hierarchy, the typed events and decisions, every limit and its
default, an agent's options, the safe reader of a user's files, the policy file's search, the optional extras, and how a
run ends (ending/). It imports nothing else of pyguard: the engine, the records, the live wing (pyguard.live) and the
offline wing (loading, replay, check, calibrate, tune, report) all stand on it."""

__all__: list[str] = []
