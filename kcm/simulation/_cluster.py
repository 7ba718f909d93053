"""The whole simulated cluster as one Runnable: nodes, scheduler, kubelet, and the simulated
CSI driver's provisioner, attacher and resizer."""

from __future__ import annotations

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.informers import SharedInformerFactory

from ._attached_volumes import VolumesInUseReporter
from ._config import SimulationConfig
from ._csi_attacher import CSIAttacher
from ._csi_resizer import CSIResizer
from ._kubelet import Kubelet
from ._nodes import NodeSimulator
from ._provisioner import Provisioner
from ._scheduler import EventRecorder, Scheduler

__all__ = ["SimulatedCluster"]


class SimulatedCluster:
    """Simulated nodes, scheduler, kubelet and volume provisioner sharing one client, factory
    and clock.

    Args:
        client: the API client.
        factory: the shared informer factory; it must run alongside (the Manager runs it).
        config: node count, capacity and timings.
        clock: one clock for heartbeats, delays and timestamps.
        registry: Prometheus registry for the ``sim-scheduler`` and ``sim-kubelet``
            controllers' metrics.
        scheduler_recorder, kubelet_recorder, provisioner_recorder: event recorders
            (``default-scheduler``, ``kubelet``, ``simulated.kcm.dev``), optional.

    Usage::

        cluster = SimulatedCluster(client, factory)
        async with anyio.create_task_group() as tg:
            tg.start_soon(factory.run)
            await tg.start(cluster.run)  # nodes registered, scheduler and kubelet running
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        config: SimulationConfig | None = None,
        clock: Clock = SYSTEM_CLOCK,
        registry: CollectorRegistry | None = None,
        scheduler_recorder: EventRecorder | None = None,
        kubelet_recorder: EventRecorder | None = None,
        provisioner_recorder: EventRecorder | None = None,
    ) -> None:
        self.config = config if config is not None else SimulationConfig()
        self.nodes = NodeSimulator(client, config=self.config, clock=clock)
        self.scheduler = Scheduler(
            client,
            factory,
            config=self.config,
            clock=clock,
            registry=registry,
            recorder=scheduler_recorder,
        )
        self.kubelet = Kubelet(
            client,
            factory,
            config=self.config,
            clock=clock,
            registry=registry,
            recorder=kubelet_recorder,
        )
        self.provisioner = Provisioner(
            client, factory, clock=clock, registry=registry, recorder=provisioner_recorder
        )
        self.volumes_in_use = VolumesInUseReporter(client, factory, clock=clock, registry=registry)
        self.csi_attacher = CSIAttacher(client, factory, clock=clock, registry=registry)
        self.csi_resizer = CSIResizer(client, factory, clock=clock, registry=registry)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Register the nodes, start the scheduler, kubelet and provisioner (which creates the
        default StorageClass), then run until cancelled.

        ``task_status.started()`` is called once all run (the scheduler, kubelet and
        provisioner wait for the factory's caches)."""
        async with anyio.create_task_group() as tg:
            await tg.start(self.nodes.run)
            await tg.start(self.scheduler.run)
            await tg.start(self.kubelet.run)
            await tg.start(self.provisioner.run)
            await tg.start(self.volumes_in_use.run)
            await tg.start(self.csi_attacher.run)
            await tg.start(self.csi_resizer.run)
            task_status.started()
