"""The CSR signing controller: approved requests for the built-in signers get a certificate.

kube-controller-manager's ``csrsigning`` (one ``CSRSigningController`` per signer sharing
``certificate_controller.go``'s queue logic). A request is signed when it is approved (and not
denied), not failed, has no certificate yet and names a signer kcm holds a CA for. The signer's
rules (:mod:`._signer_rules`) come first: a request they refuse gets a ``Failed`` condition
(reason ``SignerValidationFailure``) instead. The certificate lasts ``spec.expirationSeconds``
(at least 10 minutes) or ``--cluster-signing-duration``, whichever is shorter. Both writes are a
PUT of ``/status`` at the cached resourceVersion; a conflict is retried with backoff.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Unpack, final

import msgspec

from kcm.client import ApiClient
from kcm.clock import Clock
from kcm.controllerkit import (
    QueueController,
    QueueControllerOptions,
    certificate_rate_limiter,
    has_true_condition,
    is_approved,
    parse_certificate_request,
)
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.certificates_v1 import (
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    CertificateSigningRequestStatus,
)
from kcm.runtime import EnqueueForObject, Result
from kcm.workqueue import RateLimiter

from ._ca_files import CAFiles
from ._signer_rules import refusal

__all__ = ["DEFAULT_DURATION", "MIN_DURATION", "CSRSigningController", "certificate_duration"]

logger = logging.getLogger(__name__)

DEFAULT_DURATION = timedelta(days=365)
"""``--cluster-signing-duration``'s default."""
MIN_DURATION = timedelta(minutes=10)
"""The shortest certificate a request may ask for."""


def certificate_duration(expiration_seconds: int | None, maximum: timedelta) -> timedelta:
    """How long a certificate lasts: ``expiration_seconds`` within [10 min, ``maximum``],
    else ``maximum`` (kube's ``signer.duration``)."""
    if expiration_seconds is None:
        return maximum
    requested = timedelta(seconds=expiration_seconds)
    if requested > maximum:
        return maximum
    return max(requested, MIN_DURATION)


@final
class CSRSigningController(QueueController):
    """Signs approved CertificateSigningRequests for the signers in ``signers``.

    Args:
        client: the API client the status is written with.
        factory: where the CertificateSigningRequest informer comes from.
        signers: the CA files per signer name (``kubernetes.io/kubelet-serving``, ...).
        duration: ``--cluster-signing-duration``, the longest certificate.
        options: :class:`~kcm.controllerkit.QueueControllerOptions`; the clock is also ``now``
            for the certificates' validity, the recorder is unused (kube's signer emits no
            events); kube-controller-manager runs 5 workers per signer.

    Guarantees:
        * A request that already has a certificate, is not approved, is denied or failed, or
          names another signer is never written.
        * A signed certificate verifies against its signer's CA and carries the request's
          subject, names and key, and its usages.
    """

    queue_name = "csrsigning"
    default_workers = 5

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        signers: Mapping[str, CAFiles],
        duration: timedelta = DEFAULT_DURATION,
        **options: Unpack[QueueControllerOptions],
    ) -> None:
        self.signers = dict(signers)
        self.duration = duration
        super().__init__(client, factory, **options)

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        requests = factory.informer_for(CertificateSigningRequest)
        self._requests = self.watch(requests, EnqueueForObject(), kind="CertificateSigningRequest")

    def __repr__(self) -> str:
        return f"<CSRSigningController signers={sorted(self.signers)}>"

    def rate_limiter(self, clock: Clock) -> RateLimiter[ObjectKey]:
        """kube's certificate queue (:func:`~kcm.controllerkit.certificate_rate_limiter`)."""
        return certificate_rate_limiter(clock)

    async def reconcile(self, request: ObjectKey) -> Result:
        """Sign, or fail, CSR ``request.name`` if it is this controller's to sign.

        Raises:
            ValueError: the request is no PEM CSR (retried with backoff, as kube).
            SigningError: the CA cannot sign it now (retried).
            KcmError: the status write failed (retried).
        """
        csr = self._requests.get_or_none(None, request.name)
        if csr is None or csr.spec is None:
            return Result()
        if csr.status is not None and csr.status.certificate:
            return Result()
        if not is_approved(csr) or has_true_condition(csr, "Failed"):
            return Result()
        files = self.signers.get(csr.spec.signer_name or "")
        if files is None:
            return Result()
        try:
            x509_request = parse_certificate_request(csr.spec.request)
        except ValueError as exc:
            raise ValueError(f"unable to parse csr {request.name!r}: {exc}") from exc
        usages = list(csr.spec.usages or ())
        reason = refusal(csr.spec.signer_name or "", x509_request, usages)
        if reason is not None:
            await self._fail(csr, reason)
            return Result()
        ca = await files.current()
        ttl = certificate_duration(csr.spec.expiration_seconds, self.duration)
        certificate = ca.sign(x509_request, usages, ttl, self._clock.now())
        await self._write_status(csr, certificate=certificate)
        logger.info("signed certificate for csr %s (%s)", request.name, csr.spec.signer_name)
        return Result()

    async def _fail(self, csr: CertificateSigningRequest, message: str) -> None:
        failed = CertificateSigningRequestCondition(
            type="Failed",
            status="True",
            reason="SignerValidationFailure",
            message=message,
            last_update_time=self._clock.now(),
        )
        conditions = [*((csr.status.conditions if csr.status else None) or ()), failed]
        await self._write_status(csr, conditions=conditions)
        logger.info("csr %s failed signer validation: %s", csr.metadata.name, message)

    async def _write_status(self, csr: CertificateSigningRequest, **changes: Any) -> None:
        status = csr.status or CertificateSigningRequestStatus()
        updated = msgspec.structs.replace(csr, status=msgspec.structs.replace(status, **changes))
        await self._client.api(CertificateSigningRequest).replace_status(updated)
