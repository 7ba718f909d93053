"""The live terminal summary of ``kcm run`` (when stdout is a terminal).

Everything shown comes from what the manager already exposes: its Prometheus registry
(controller-runtime's reconcile counters and worker gauges, client-go's ``workqueue_depth``),
its leader elector, and, when simulating, the shared pod and node caches. Nothing here talks
to the API server.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry

from kcm.clock import SYSTEM_CLOCK, Clock

__all__ = ["ControllerRow", "RateTracker", "StatusSnapshot", "StatusView", "read_metrics", "render"]

_SIM_CONTROLLERS = ("sim-scheduler", "sim-kubelet")


@dataclass
class ControllerRow:
    """One controller's line: workers busy/max, queue depth, reconciles per second,
    errors and reconciles since start."""

    name: str
    active: int = 0
    workers: int = 0
    queue: int = 0
    rate: float = 0.0
    errors: int = 0
    total: int = 0
    running: bool = False


@dataclass
class StatusSnapshot:
    """What one frame of the view shows."""

    server: str | None
    leader_election: bool
    is_leader: bool
    leader: str | None
    uptime: float
    controllers: list[ControllerRow] = field(default_factory=list)
    nodes: tuple[int, int] | None = None  # (ready, total)
    pods: dict[str, int] = field(default_factory=dict)  # phase -> count
    kubeconfig: str | None = None  # embedded mode: the kubeconfig kcm wrote


@dataclass
class _Metrics:
    totals: dict[str, float] = field(default_factory=dict)
    errors: dict[str, float] = field(default_factory=dict)
    active: dict[str, float] = field(default_factory=dict)
    workers: dict[str, float] = field(default_factory=dict)
    depth: dict[str, float] = field(default_factory=dict)


def read_metrics(registry: CollectorRegistry) -> _Metrics:
    """Per-controller totals, errors, busy and max workers, and queue depth from the
    registry (controller-runtime's and client-go's metric names)."""
    out = _Metrics()
    for family in registry.collect():
        for sample in family.samples:
            labels = sample.labels
            if sample.name == "controller_runtime_reconcile_total":
                name = labels.get("controller", "")
                out.totals[name] = out.totals.get(name, 0.0) + sample.value
            elif sample.name == "controller_runtime_reconcile_errors_total":
                out.errors[labels.get("controller", "")] = sample.value
            elif sample.name == "controller_runtime_active_workers":
                out.active[labels.get("controller", "")] = sample.value
            elif sample.name == "controller_runtime_max_concurrent_reconciles":
                out.workers[labels.get("controller", "")] = sample.value
            elif sample.name == "workqueue_depth":
                out.depth[labels.get("name", "")] = sample.value
    return out


class RateTracker:
    """Reconciles per second over a sliding window of counter samples."""

    def __init__(self, window: float = 10.0) -> None:
        self._window = window
        self._samples: deque[tuple[float, dict[str, float]]] = deque()

    def update(self, now: float, totals: dict[str, float]) -> dict[str, float]:
        """Record ``totals`` at ``now``; returns each controller's rate over the window."""
        self._samples.append((now, dict(totals)))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self._window:
            self._samples.popleft()
        then, old = self._samples[0]
        elapsed = now - then
        if elapsed <= 0:
            return dict.fromkeys(totals, 0.0)
        return {k: max(v - old.get(k, 0.0), 0.0) / elapsed for k, v in totals.items()}


def _squash(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


_QUEUE_OWNERS = {
    "ClusterRoleAggregator": "clusterrole-aggregation",
    "noexec_taint_pod": "nodelifecycle",
    "replicationmanager": "replicationcontroller",
    "ttl_jobs_to_delete": "ttl-after-finished",
    "ttlcontroller": "ttl",
}
"""Work queues named as kube-controller-manager's whose name does not start with the
controller's (the rest match by prefix: ``endpoint_slice`` is endpointslice's)."""


def _rows(
    controllers: Iterable[str], metrics: _Metrics, rates: dict[str, float]
) -> list[ControllerRow]:
    """One row per started controller; the runtime controllers a built-in one is made of
    (the garbage collector's ``garbage_collector_attempt_to_delete`` and ``..._orphan``) are
    summed into its row."""
    names = list(controllers)
    owner: dict[str, str] = {}
    for metric_name in metrics.workers:
        squashed = _squash(metric_name)
        matches = [n for n in names if squashed.startswith(_squash(n))]
        match = _QUEUE_OWNERS.get(metric_name) or max(matches, key=len, default=None)
        owner[metric_name] = match or metric_name
    extra = sorted({o for o in owner.values() if o not in names and o not in _SIM_CONTROLLERS})
    names += extra + [n for n in _SIM_CONTROLLERS if n in owner.values()]
    rows = {n: ControllerRow(name=n) for n in names}
    for metric_name, row_name in owner.items():
        row = rows[row_name]
        row.running = True
        row.active += int(metrics.active.get(metric_name, 0))
        row.workers += int(metrics.workers.get(metric_name, 0))
        row.queue += int(metrics.depth.get(metric_name, 0))
        row.rate += rates.get(metric_name, 0.0)
        row.errors += int(metrics.errors.get(metric_name, 0))
        row.total += int(metrics.totals.get(metric_name, 0))
    return list(rows.values())


def _uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:d}:{minutes:02d}:{secs:02d}"


def render(snapshot: StatusSnapshot) -> Any:
    """The frame as a rich renderable: a header line (and, in embedded mode, the
    ``export KUBECONFIG=...`` line, so it never scrolls away), the controller table, the
    cluster."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    if not snapshot.leader_election:
        leader = Text("leader election off", style="yellow")
    elif snapshot.is_leader:
        leader = Text("leader: this process", style="bold green")
    else:
        who = snapshot.leader or "nobody yet"
        leader = Text(f"standby (leader: {who})", style="yellow")
    header = Text.assemble(
        ("kcm ", "bold"),
        (f"{snapshot.server or ''}  ", "cyan"),
        leader,
        f"  up {_uptime(snapshot.uptime)}",
    )
    parts: list[Any] = [header]
    if snapshot.kubeconfig:
        parts.append(
            Text.assemble("kubectl: ", (f"export KUBECONFIG={snapshot.kubeconfig}", "cyan"))
        )
    table = Table(expand=False, box=None, pad_edge=False, header_style="bold")
    for column, justify in (
        ("controller", "left"),
        ("workers", "right"),
        ("queue", "right"),
        ("reconciles/s", "right"),
        ("errors", "right"),
        ("total", "right"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    # Standing by, nothing runs (a controller's metrics exist from when it was added, so
    # "0/5" would suggest idle workers): every row waits. Leading, a controller that is not a
    # runtime controller (podgc's single loop) has no metrics to show: "-".
    standby = snapshot.leader_election and not snapshot.is_leader
    for row in snapshot.controllers:
        style = None if row.running and not standby else "dim"
        if standby:
            workers = "waiting"
        elif row.running:
            workers = f"{row.active}/{row.workers}"
        else:
            workers = "-"
        table.add_row(
            row.name,
            workers,
            str(row.queue),
            f"{row.rate:.1f}",
            Text(str(row.errors), style="red" if row.errors else ""),
            str(row.total),
            style=style,
        )
    parts.append(table)
    if snapshot.nodes is not None:
        ready, total = snapshot.nodes
        phases = ", ".join(f"{n} {p.lower()}" for p, n in sorted(snapshot.pods.items()))
        parts.append(Text(f"nodes: {ready}/{total} ready   pods: {phases or 'none'}"))
    return Group(*parts)


def _cluster(manager: Any) -> tuple[tuple[int, int] | None, dict[str, int]]:
    """Node readiness and pod phases from the manager's existing caches (no new informers)."""
    nodes: tuple[int, int] | None = None
    pods: dict[str, int] = {}
    for key, informer in manager.factory.informers().items():
        if key.namespace or key.label_selector or key.field_selector:
            continue
        if key.resource == "v1/nodes":
            items = informer.lister().list()
            ready = sum(
                1
                for n in items
                if any(
                    c.type == "Ready" and c.status == "True"
                    for c in ((n.status.conditions if n.status else None) or [])
                )
            )
            nodes = (ready, len(items))
        elif key.resource == "v1/pods":
            for p in informer.lister().list():
                phase = (p.status.phase if p.status else None) or "Pending"
                pods[phase] = pods.get(phase, 0) + 1
    return nodes, pods


class StatusView:
    """Redraws the summary every ``interval`` seconds until cancelled.

    Args:
        manager: the running :class:`~kcm.runtime.Manager`.
        controllers: the controllers kcm started (rows appear before their metrics do).
        server: the API server URL shown in the header.
        simulated: show node and pod counts from the caches.
        kubeconfig: the kubeconfig embedded mode wrote (shown as an ``export`` line).
        interval: seconds between frames.
        clock: times the frames and the uptime (a FakeClock in tests).
    """

    def __init__(
        self,
        manager: Any,
        *,
        controllers: Sequence[str],
        server: str | None,
        simulated: bool,
        kubeconfig: str | None = None,
        interval: float = 1.0,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._kubeconfig = kubeconfig
        self._clock = clock
        self._manager = manager
        self._controllers = list(controllers)
        self._server = server
        self._simulated = simulated
        self._interval = interval
        self._rates = RateTracker()
        self._started = clock.monotonic()

    def snapshot(self) -> StatusSnapshot:
        """The current state (reads metrics and caches; never blocks)."""
        now = self._clock.monotonic()
        metrics = read_metrics(self._manager.registry)
        rates = self._rates.update(now, metrics.totals)
        elector = self._manager.elector
        nodes, pods = _cluster(self._manager) if self._simulated else (None, {})
        return StatusSnapshot(
            server=self._server,
            leader_election=self._manager.leader_election is not None,
            is_leader=bool(self._manager.is_leader),
            leader=elector.leader if elector is not None else None,
            uptime=now - self._started,
            controllers=_rows(self._controllers, metrics, rates),
            nodes=nodes,
            pods=pods,
            kubeconfig=self._kubeconfig,
        )

    async def run(self) -> None:
        """Show the live view on the shared console until cancelled."""
        from rich.live import Live

        from ._logging import console

        with Live(render(self.snapshot()), console=console(), auto_refresh=False) as live:
            while True:
                await self._clock.sleep(self._interval)
                live.update(render(self.snapshot()), refresh=True)
