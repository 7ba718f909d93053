"""Attaches in flight: kube's attach operation waits for the external attacher to say
``attached`` (up to two minutes), and no other operation on the volume runs meanwhile, so a
detach of a volume whose attach has not finished waits for it to end (attached, or failed
with a ``FailedAttachVolume`` event on the pods it was for, then retried while still wanted).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcm.controllerkit import CSIVolume
from kcm.models.core_v1 import Pod

__all__ = ["ATTACH_TIMEOUT", "AttachAttempt", "AttachAttempts"]

ATTACH_TIMEOUT = 120.0
"""Seconds an attach waits for the VolumeAttachment to be attached (kube's ``csiTimeout``)."""


@dataclass
class AttachAttempt:
    """One attach: when it started, of what, for which pods."""

    started: float
    volume: CSIVolume
    pods: list[Pod] = field(default_factory=list)
    failures: int = 0

    def failure(self) -> str:
        """The ``FailedAttachVolume`` message when it times out (kube's text)."""
        return (
            f'AttachVolume.Attach failed for volume "{self.volume.pv_name}" : '
            f"Attach timeout for volume {self.volume.handle}"
        )


class AttachAttempts:
    """The attaches in flight, by VolumeAttachment name (times from the controller's clock)."""

    def __init__(self) -> None:
        self._attempts: dict[str, AttachAttempt] = {}

    def wanted(
        self, name: str, volume: CSIVolume, pods: list[Pod], *, attached: bool, now: float
    ) -> tuple[AttachAttempt | None, float | None]:
        """A wanted attachment: the attempt that just timed out (a new one starts), and the
        seconds until the current one times out (None: attached, nothing in flight)."""
        if attached:
            self._attempts.pop(name, None)
            return None, None
        attempt = self._attempts.get(name)
        failed = None
        if attempt is not None and now >= attempt.started + ATTACH_TIMEOUT:
            failed, attempt = attempt, None
        if attempt is None:
            tries = failed.failures + 1 if failed is not None else 0
            attempt = self._attempts[name] = AttachAttempt(now, volume, list(pods), tries)
        return failed, attempt.started + ATTACH_TIMEOUT - now

    def unwanted(
        self, name: str, *, attached: bool, now: float
    ) -> tuple[AttachAttempt | None, float]:
        """An attachment to detach: the attempt that just timed out, and the seconds the
        detach must still wait for the attach in flight (0: detach now)."""
        attempt = self._attempts.get(name)
        if attempt is None or attached:
            self._attempts.pop(name, None)
            return None, 0.0
        if now < attempt.started + ATTACH_TIMEOUT:
            return None, attempt.started + ATTACH_TIMEOUT - now
        del self._attempts[name]
        return attempt, 0.0

    def first_in_flight(self, name: str, now: float) -> float | None:
        """Seconds until the first attach of ``name`` ends, if it is in flight (kube does not
        count such a volume as attached anywhere yet), else None."""
        attempt = self._attempts.get(name)
        if attempt is None or attempt.failures or now >= attempt.started + ATTACH_TIMEOUT:
            return None
        return attempt.started + ATTACH_TIMEOUT - now

    def forget(self, name: str) -> None:
        """The attachment is gone."""
        self._attempts.pop(name, None)
