"""Leader-election timings, validated once at construction (L5, L6)."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from kcm.errors import ConfigError

__all__ = ["JITTER_FACTOR", "LeaderElectionConfig"]

logger = logging.getLogger(__name__)

JITTER_FACTOR = 1.2
"""client-go's ``JitterFactor``: acquire retries wait ``retry_period * [1, 1 + factor)``."""


@dataclass(frozen=True, kw_only=True)
class LeaderElectionConfig:
    """How long a lease lasts and how eagerly it is renewed.

    Attributes:
        lease_duration: seconds a candidate waits, after it last saw the record change, before
            it takes a lease over (written as ``leaseDurationSeconds``, rounded up).
        renew_deadline: seconds a renewal round may keep retrying before the leader gives up.
        retry_period: seconds between attempts (acquire waits are jittered by
            ``jitter_factor``; renewals are not).
        jitter_factor: acquire retries wait ``retry_period * (1 + U[0, jitter_factor))``.
        release_on_cancel: when leadership ends (shutdown, error or lost renewal), write an
            empty holder so a peer takes over on its next retry instead of after a full lease.
        name: label for metrics and logs (defaults to the lock's :meth:`describe`).

    Raises:
        kcm.errors.ConfigError: a duration is not positive, or
            ``lease_duration > renew_deadline > jitter_factor * retry_period`` does not hold.

    Caveats:
        The leader stops acting at most ``renew_deadline + retry_period`` after its last
        successful renewal and candidates wait ``lease_duration`` after they see it, so the
        safety margin is ``lease_duration - renew_deadline - retry_period`` (3 s by default).
        If that is not positive the leader stops at ``lease_duration`` instead (zero margin);
        a warning is logged.
    """

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    jitter_factor: float = JITTER_FACTOR
    release_on_cancel: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        for field in ("lease_duration", "renew_deadline", "retry_period"):
            value = getattr(self, field)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigError(f"{field} must be a positive number of seconds", field=field)
        if not (math.isfinite(self.jitter_factor) and self.jitter_factor >= 0):
            raise ConfigError("jitter_factor must be >= 0", field="jitter_factor")
        if self.lease_duration <= self.renew_deadline:
            raise ConfigError(
                f"lease_duration ({self.lease_duration} s) must be greater than renew_deadline"
                f" ({self.renew_deadline} s)",
                field="lease_duration",
            )
        if self.renew_deadline <= self.jitter_factor * self.retry_period:
            raise ConfigError(
                f"renew_deadline ({self.renew_deadline} s) must be greater than jitter_factor *"
                f" retry_period ({self.jitter_factor} * {self.retry_period} s)",
                field="renew_deadline",
            )
        if self.renew_deadline + self.retry_period >= self.lease_duration:
            logger.warning(
                "leader election: renew_deadline + retry_period (%s s) >= lease_duration (%s s);"
                " the leader will stop at the lease duration with no safety margin",
                self.renew_deadline + self.retry_period,
                self.lease_duration,
            )

    @property
    def lease_duration_seconds(self) -> int:
        """``lease_duration`` rounded up to whole seconds, as written into the record."""
        return max(1, math.ceil(self.lease_duration))

    @property
    def acting_horizon(self) -> float:
        """Seconds after a renewal began that the leader may act: ``min(RD + RP, LD)``."""
        return min(self.renew_deadline + self.retry_period, self.lease_duration)
