"""A recorded run as a scenario file, kept at this path: :func:`scenario_from_calls` lives in
:mod:`pyguard.jvm.recorded_scenario`, beside the Java recording it reads (:mod:`pyguard.jvm.recording`)."""

from __future__ import annotations

from pyguard.jvm.recorded_scenario import scenario_from_calls

__all__ = ["scenario_from_calls"]
