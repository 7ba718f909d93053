"""Prometheus metrics for leader election, registered on a registry the caller passes in."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = ["LeaderElectionMetrics"]


class LeaderElectionMetrics:
    """client-go's leader-election metrics (L15), without a process-global registry (B17).

    One instance may serve many electors; each reports under its own ``name`` label.

    Metrics:
        ``leader_election_master_status{name}``: 1 while this process leads, else 0.
        ``leader_election_transitions_total{name}``: times this process became leader
            (summed over replicas: how often leadership moved).
        ``leader_election_slowpath_total{name}``: renewals that needed a GET after the
            fast-path update failed.

    Args:
        registry: where to register; ``None`` leaves the metrics unregistered (tests).
    """

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.master_status = Gauge(
            "leader_election_master_status",
            "Whether this process is the leader (1) or not (0), per lease name.",
            ["name"],
            registry=registry,
        )
        self.transitions = Counter(
            "leader_election_transitions",
            "Times this process acquired leadership, per lease name.",
            ["name"],
            registry=registry,
        )
        self.slowpath = Counter(
            "leader_election_slowpath",
            "Renewals that fell back to GET + update, per lease name.",
            ["name"],
            registry=registry,
        )

    def leader_on(self, name: str) -> None:
        self.master_status.labels(name=name).set(1)
        self.transitions.labels(name=name).inc()

    def leader_off(self, name: str) -> None:
        self.master_status.labels(name=name).set(0)

    def slowpath_taken(self, name: str) -> None:
        self.slowpath.labels(name=name).inc()
