"""The CSR cleaner: deletes CertificateSigningRequests nobody needs any more.

kube-controller-manager's ``csrcleaner``: a pass over the cached requests every hour (the first
at start); each one :func:`cleanup_reason` condemns is deleted. A failed delete is logged and
tried again on the next pass.
"""

from __future__ import annotations

import logging
from typing import final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import run_every
from kcm.errors import ApiError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models.certificates_v1 import CertificateSigningRequest
from kcm.record import EventRecorder

from ._rules import POLLING_INTERVAL, cleanup_reason

__all__ = ["CSRCleanerController"]

logger = logging.getLogger(__name__)


@final
class CSRCleanerController:
    """Deletes issued-and-expired and old approved, denied, failed or pending CSRs.

    Args:
        client: the API client the deletes go through.
        factory: where the CertificateSigningRequest informer comes from.
        recorder: unused (kube's cleaner only logs); the common signature.
        clock: ``now`` for the ages, and the pass period.
        workers: accepted for the common signature; one pass at a time.
        registry: unused (kube's cleaner has no metrics); the common signature.
        period: seconds between passes (kube: one hour).

    Attributes:
        passes: completed passes (tests wait on it).
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder | None = None,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
        period: float = POLLING_INTERVAL.total_seconds(),
    ) -> None:
        self._client = client
        self._clock = clock
        self._period = period
        self.workers = workers
        self.informer = factory.informer_for(CertificateSigningRequest)
        self.passes = 0

    def __repr__(self) -> str:
        return f"<CSRCleanerController passes={self.passes}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Wait for the cache, then clean every ``period`` seconds until cancelled."""
        await self.informer.wait_for_sync()
        task_status.started()
        await run_every(self._clock, self._period, self.clean_once)

    async def clean_once(self) -> None:
        """One pass over the cached requests."""
        now = self._clock.now()
        api = self._client.api(CertificateSigningRequest)
        for csr in self.informer.lister().list():
            reason = cleanup_reason(csr, now)
            if reason is None:
                continue
            name = csr.metadata.name or ""
            logger.info("Cleaning CSR %r as %s.", name, reason)
            try:
                await api.delete(name)
            except NotFound:
                pass
            except ApiError as exc:
                logger.error("Error while attempting to clean CSR %r: %s", name, exc)
        self.passes += 1
