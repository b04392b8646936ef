"""The policy a test's guard runs with, and the per-test guard that records what it produced.

The policy is built in layers, each laid over the one before:

1. ``PolicyConfig()`` defaults, or the session's ``--pyguard-policy`` / ``pyguard_policy`` TOML file;
2. the marker's ``policy``: a TOML file replaces the layer below, a dict is merged into it key by key;
3. the marker's ``max_iterations``: the hard cap on model calls (``caps.max_model_calls``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyguard.pytest_plugin.marker import MarkerArgs
from pyguard.pytest_plugin.settings import PluginSettings

if TYPE_CHECKING:  # pragma: no cover
    from pyguard.engine import PolicyConfig

__all__ = ["build_policy", "deep_merge"]


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` laid over ``base``: nested dicts merge key by key, any other value replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def build_policy(settings: PluginSettings, args: MarkerArgs) -> "PolicyConfig":
    """The test's policy from the session settings and the test's marker (see the module docstring)."""
    from pyguard.engine import PolicyConfig

    config = PolicyConfig.from_toml(settings.policy) if settings.policy is not None else PolicyConfig()
    if args.policy_file is not None:
        config = PolicyConfig.from_toml(args.policy_file)
    overlay: dict[str, Any] = dict(args.policy_fields or {})
    if args.max_iterations is not None:
        overlay = deep_merge(overlay, {"caps": {"max_model_calls": args.max_iterations}})
    if overlay:
        config = PolicyConfig.model_validate(deep_merge(config.model_dump(), overlay))
    return config
