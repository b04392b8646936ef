"""The streak stall rules: ``error_storm`` (the same kind of error again and again) and ``low_gain_streak`` (one dull
or empty result after another). Each keeps its own counters (one per run, inside the stall detector)."""

from __future__ import annotations

from collections.abc import Iterable

from pyguard.engine.conditions import StallSubject, StopHit
from pyguard.engine.config import StallConfig
from pyguard.engine.fingerprint import ActionFingerprint
from pyguard.engine.stall_report import action_hit, stall_hit
from pyguard.engine.steps import ActionResult

__all__: list[str] = []


class ErrorStorm:
    """``error_storm_length`` consecutive errors of the same kind from the same tool with unchanged (normalised)
    inputs, even when the error texts differ (request ids, numbers)."""

    def __init__(self, config: StallConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._errors: dict[str, tuple[str, int]] = {}  # tool -> (input+kind key, consecutive count)

    @property
    def counting(self) -> bool:
        """Some tool's last result was an error (a success of it must end its storm)."""
        return bool(self._errors)

    def observe(self, iteration: int, r: ActionResult) -> StopHit | None:
        a = r.action
        if a is None:
            return None
        if not r.is_error:
            self._errors.pop(a.tool, None)
            return None
        key = (a.norm_id if self.config.normalised_repeats else a.exact_id) + ":" + (r.error_kind or "")
        previous = self._errors.get(a.tool)
        count = previous[1] + 1 if previous is not None and previous[0] == key else 1
        self._errors[a.tool] = (key, count)
        if count < self.config.error_storm_length:
            return None
        return action_hit(
            "error_storm",
            iteration,
            r,
            f"{a.tool} failed {count} times in a row with the same kind of error and unchanged inputs ({a.short(80)}).",
            {"errors": count, "error_kind": r.error_kind},
        )


class LowGainStreak:
    """``low_gain_streak`` consecutive iterations whose gain is below ``low_gain_threshold``
    (``low_gain_streak_after_reflection`` once rearmed after a reflection); ``empty_streak`` (and
    ``empty_streak_after_reflection``) when every tool result of the streak was empty."""

    def __init__(self, config: StallConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self.rearmed = False
        self._clear()

    def rearm(self) -> None:
        """Count afresh, to the after-reflection lengths."""
        self.rearmed = True
        self._clear()

    def _clear(self) -> None:
        self._streak = 0
        self._gains: list[float] = []
        self._empties = 0  # iterations at the end of the streak whose every tool result was empty

    def observe(
        self,
        iteration: int,
        gain: float,
        counts: bool,
        empty: bool,
        history: Iterable[tuple[int, ActionFingerprint]],
    ) -> StopHit | None:
        """The streak after this iteration, and its hit when it is long enough. ``counts``: the iteration counts
        towards a streak; ``empty``: its every tool result was empty; ``history``: (iteration, action) requested."""
        if not counts:
            return None
        cfg = self.config
        if gain < cfg.low_gain_threshold:
            self._streak += 1
            self._gains.append(round(gain, 4))
            self._empties = self._empties + 1 if empty else 0
        else:
            self._clear()
        needed = cfg.low_gain_streak_after_reflection if self.rearmed else cfg.low_gain_streak
        only_empty = self._empties >= self._streak
        if only_empty:
            needed = min(needed, cfg.empty_streak_after_reflection if self.rearmed else cfg.empty_streak)
        if self._streak < needed:
            return None
        recent = [a for it, a in history if it >= iteration - self._streak]
        tools = sorted({a.tool for a in recent})
        what = (
            "came back empty"
            if only_empty
            else (
                "brought almost nothing new "
                f"(information gain {', '.join(f'{g:.2f}' for g in self._gains[-6:])}; "
                f"threshold {cfg.low_gain_threshold:.2f})"
            )
        )
        return stall_hit(
            "low_gain_streak",
            f"The last {self._streak} tool results {what}.",
            {
                "streak": self._streak,
                "streak_gains": list(self._gains[-20:]),
                "tools": tools,
                "empty": only_empty,
            },
            StallSubject(
                iteration,
                tool=tools[0] if len(tools) == 1 else None,
                fingerprints=tuple(a.short() for a in recent[-5:]),
            ),
        )
