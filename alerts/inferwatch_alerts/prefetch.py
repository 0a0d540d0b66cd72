"""Prefetching observations for a backtest: one read per rule for a block of upcoming evaluations.

An observation depends only on the stored data and its window end, never on alert state, so a replay can read
the observations of the next ``block`` evaluations of a threshold or baseline rule at once
(:func:`~.observations.observe_many`) and run the state machine tick by tick from memory. A week at 1-minute
steps then costs about 10,080 / ``block`` reads per minute rule instead of 10,080, and an hourly proportion
drift rule one read (of 15 windows) a day. Length and creep detectors are observed as the scheduler observes
them (:func:`~.observations.observe`).

Memory is one block per rule and project scope: a block is dropped when the replay moves past it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from inferwatch_collector.store import Store

from .observations import DAY, MINUTE, Observations, observe, observe_many
from .rules import BaselineSpec, Rule, Threshold

Observer = Callable[[Store, Rule, datetime, "Sequence[str] | None"], Observations]

BLOCK = 60  # evaluations per read: an hour at 1-minute steps


class BlockObserver:
    """An observer for :func:`~.evaluate.evaluate` in a replay whose evaluations step by ``step_s`` up to the
    window end ``last``: on a miss it reads the rule's observations at this end and the next window ends the
    replay will evaluate the rule at (``block`` of a minute rule's; a day of an hourly drift rule's, at most
    ``block``), and serves them from memory. A wrong guess only costs a read: a miss reads a new block."""

    def __init__(self, step_s: int, last: datetime, block: int = BLOCK) -> None:
        if block < 1:
            raise ValueError("block must be at least 1")
        self.step_s, self.last, self.block = step_s, last, block
        self.reads = 0  # observe_many calls, for the benchmark
        self._cache: dict[tuple[str, tuple[str, ...] | None], dict[datetime, Observations]] = {}

    def __call__(self, store: Store, rule: Rule, end: datetime, projects: Sequence[str] | None) -> Observations:
        cond = rule.condition
        batched = isinstance(cond, (Threshold, BaselineSpec)) or cond.kind == "proportion_spike"
        period = self._period(rule)
        if not batched or period is None:
            return observe(store, rule, end, projects)
        key = (rule.id, tuple(projects) if projects is not None else None)
        cached = self._cache.get(key)
        if cached is None or end not in cached:
            # minute rules: ``block`` ticks ahead; hourly drift rules: a day of their hours
            count = self.block if period <= self.step_s else max(1, min(self.block, DAY // period))
            ends = [end + timedelta(seconds=i * period) for i in range(count)]
            cached = self._cache[key] = observe_many(store, rule, [t for t in ends if t <= self.last] or [end],
                                                     projects)
            self.reads += 1
        return cached.pop(end)

    def _period(self, rule: Rule) -> int | None:
        """Seconds between the window ends the replay evaluates ``rule`` at, when they are evenly spaced (its
        ``every`` or the step, whichever is the multiple of the other); None otherwise (read per tick)."""
        every = max(rule.every_s, MINUTE)
        if every % self.step_s == 0:
            return every
        if self.step_s % every == 0:
            return self.step_s
        return None
