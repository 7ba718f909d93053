"""A health check for a manager's ``/healthz`` that watches a leader elector (L14)."""

from __future__ import annotations

from typing import final

from ._elector import LeaderElector

__all__ = ["HealthzAdaptor"]


@final
class HealthzAdaptor:
    """client-go's ``HealthzAdaptor``: healthy until an elector is attached, then its check.

    Register it before the elector exists (so ``/healthz`` works from the start) and attach the
    elector with :meth:`set_elector` once it is built. ``name`` is ``"leaderElection"``, as in
    kube-controller-manager, which uses a 20 s tolerance.
    """

    name = "leaderElection"

    def __init__(self, tolerance: float = 20.0) -> None:
        self.tolerance = tolerance
        self._elector: LeaderElector | None = None

    def set_elector(self, elector: LeaderElector) -> None:
        self._elector = elector

    def check(self) -> None:
        """Pass, or raise if the attached elector leads but has stopped renewing.

        Raises:
            kcm.errors.LeaderElectionLost: the leader's renew loop is stuck (see
                :meth:`LeaderElector.check`).
        """
        if self._elector is not None:
            self._elector.check(self.tolerance)
