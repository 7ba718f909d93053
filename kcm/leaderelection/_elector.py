"""The leader elector: acquire the lock, lead while renewing it, stop before it can expire.

The state machine is client-go's ``tools/leaderelection`` (L7-L14) on anyio:

``run()``: acquire (jittered retries) → ``task_status.started()`` → one task group holding the
leader work (``on_started_leading``) and the renew loop → when renewal fails the group is
cancelled → once the group has fully exited: release (if configured) → ``on_stopped_leading``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import final

import anyio
import msgspec
from anyio.abc import TaskStatus

from kcm.clock import SYSTEM_CLOCK, Clock, move_on_after, move_on_at
from kcm.errors import AlreadyExists, ConfigError, Conflict, LeaderElectionLost, NotFound

from ._config import LeaderElectionConfig
from ._metrics import LeaderElectionMetrics
from ._record import LeaderElectionRecord
from ._resourcelock import ResourceLock

__all__ = ["LeaderElector"]

logger = logging.getLogger(__name__)

_DEFAULT_CONFIG = LeaderElectionConfig()


@final
class LeaderElector:
    """Runs ``on_started_leading`` in at most one process at a time among those sharing a lock.

    Args:
        lock: where the election record lives (:class:`LeaseLock`, :class:`ConfigMapLock`,
            :class:`MultiLock`, or :class:`InMemoryLock` in tests). Its ``identity`` must be
            unique per process.
        config: timings and ``release_on_cancel`` (client-go defaults: 15 s / 10 s / 2 s).
        on_started_leading: async function run once leadership is acquired. It is cancelled
            when leadership is lost or :meth:`run` is cancelled. Returning early does not give
            up leadership (the lease keeps being renewed until :meth:`run` is cancelled).
        on_stopped_leading: called once after leadership ends and the leader work has fully
            exited; never called if leadership was never acquired (B20).
        on_new_leader: called with the holder identity whenever the observed holder changes,
            including the first observation (``""`` means the lock was released).
        clock: time source; a :class:`kcm.testing.FakeClock` makes every wait virtual.
        metrics: where to report status; ``None`` reports nothing.
        rng: source of the acquire jitter (seed it for reproducible tests).

    Raises:
        kcm.errors.ConfigError: the lock has an empty identity.

    Guarantees:
        * Every write is conditional on the version last read, so of two candidates racing for
          an expired lease exactly one succeeds; a conflict is a failed attempt, not an error.
        * Expiry is judged only by this process's monotonic clock, from the moment it *saw*
          the record change; timestamps written by other machines are never compared, so any
          wall-clock *offset* between nodes is harmless (L10, D14). The holder's own
          ``leaseDurationSeconds`` is honoured (B19).
        * The leader measures its lease from the moment its last successful write was *sent*
          and cancels the leader work at most ``min(renew_deadline + retry_period,
          lease_duration)`` later unless a renewal succeeded. Candidates wait
          ``lease_duration`` from when they *received* the record, so the leader stops first
          as long as clock *rates* differ by less than ``lease_duration / (renew_deadline +
          retry_period)`` (25 % with the defaults).
        * The lease is released (``release_on_cancel``) only after the leader work's task
          group has exited, so no leader-only code runs after the release (B21).

    Caveats:
        There is no fencing: leader work that ignores cancellation (a shielded section, a
        blocking call) can outlive its leadership. Call :meth:`lease_valid_for` right before
        an external side effect if that matters. A fresh candidate waits a full lease duration
        after first seeing a held record, even a long-abandoned one (B18); use
        ``release_on_cancel`` for a fast hand-over.
    """

    def __init__(
        self,
        lock: ResourceLock,
        config: LeaderElectionConfig = _DEFAULT_CONFIG,
        *,
        on_started_leading: Callable[[], Awaitable[object]],
        on_stopped_leading: Callable[[], object] | None = None,
        on_new_leader: Callable[[str], object] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        metrics: LeaderElectionMetrics | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if not lock.identity:
            raise ConfigError("the lock's identity must not be empty", field="identity")
        self._lock = lock
        self._config = config
        self._identity = lock.identity
        self._name = config.name or lock.describe()
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._clock = clock
        self._metrics = metrics
        self._rng = rng or random.Random()
        self._observed_record: LeaderElectionRecord | None = None
        self._observed_raw: bytes | None = None
        self._observed_time = 0.0
        self._renewed_at: float | None = None
        self._reported_leader: str | None = None
        self._leading = False
        self._running = False

    # ----------------------------------------------------------------------------- queries

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def name(self) -> str:
        """The label used in metrics and logs."""
        return self._name

    @property
    def config(self) -> LeaderElectionConfig:
        return self._config

    @property
    def is_leader(self) -> bool:
        """True from acquisition until renewal fails, :meth:`run` is cancelled or it ends."""
        return self._leading

    @property
    def leader(self) -> str | None:
        """The holder in the last observed record (``""``: released; ``None``: not read yet)."""
        return None if self._observed_record is None else self._observed_record.holder_identity

    @property
    def observed_record(self) -> LeaderElectionRecord | None:
        """The last record this elector read or wrote."""
        return self._observed_record

    def lease_valid_for(self) -> float:
        """Seconds this process may still act as leader by its own clock (0 if not leading).

        This is the time left until the leader would give up without a further successful
        renewal, which is before any candidate may take the lease over. Check it right before
        a side effect that must not happen twice.
        """
        if not self._leading or self._renewed_at is None:
            return 0.0
        left = self._renewed_at + self._config.acting_horizon - self._clock.monotonic()
        return max(0.0, left)

    def check(self, tolerance: float = 20.0) -> None:
        """Health check (L14: client-go's ``Check``): a stuck leader is unhealthy.

        Non-leaders are always healthy. A leader is unhealthy when its last successful renewal
        began more than ``lease_duration + tolerance`` seconds ago, which means its renew loop
        is stuck (it should have given up after ``renew_deadline``).

        Raises:
            kcm.errors.LeaderElectionLost: this process believes it leads but has not renewed.
        """
        if not self._leading or self._renewed_at is None:
            return
        since = self._clock.monotonic() - self._renewed_at
        limit = self._config.lease_duration + tolerance
        if since > limit:
            raise LeaderElectionLost(
                f"leader election {self._name!r}: this process believes it is the leader but"
                f" last renewed {since:.1f} s ago (more than lease duration + tolerance ="
                f" {limit:.1f} s); the renew loop is stuck"
            )

    # ----------------------------------------------------------------------------- run

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Acquire the lock, lead until leadership ends, then return.

        ``task_status.started()`` is called once leadership is acquired, so
        ``await tg.start(elector.run)`` returns when this process leads. :meth:`run` returns
        when renewal failed (leadership lost); cancel it to step down. It may be called again
        afterwards to rejoin the election.

        Raises:
            RuntimeError: :meth:`run` is already running on this elector.
            Exception: whatever ``on_started_leading`` raised (after the cleanup above).
        """
        if self._running:
            raise RuntimeError("LeaderElector.run() is already running")
        self._running = True
        try:
            await self._acquire()
            await self._lead(task_status)
        finally:
            self._running = False

    async def _acquire(self) -> None:
        cfg = self._config
        logger.info("leader election %s: %s trying to acquire the lock", self._name, self._identity)
        while True:
            acquired = False
            async with move_on_after(self._clock, cfg.renew_deadline):
                acquired = await self._try_acquire_or_renew()
            self._maybe_report_transition()
            if acquired:
                logger.info("leader election %s: %s acquired the lock", self._name, self._identity)
                return
            delay = cfg.retry_period * (1.0 + self._rng.random() * cfg.jitter_factor)
            await self._clock.sleep(delay)

    async def _lead(self, task_status: TaskStatus[None]) -> None:
        self._leading = True
        if self._metrics is not None:
            self._metrics.leader_on(self._name)
        self._record_event(f"{self._identity} became leader")
        task_status.started()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._leader_work, name=f"leader work {self._name}")
                await self._renew()
                self._stop_leading()
                logger.warning(
                    "leader election %s: %s failed to renew the lock; leadership lost",
                    self._name,
                    self._identity,
                )
                tg.cancel_scope.cancel()
        finally:
            # The leader work has fully exited here (the task group is closed): only now is it
            # safe to hand the lease to a peer (B21).
            self._stop_leading()
            with anyio.CancelScope(shield=True):
                if self._config.release_on_cancel:
                    await self._release()
                self._record_event(f"{self._identity} stopped leading")
                if self._on_stopped is not None:
                    try:
                        self._on_stopped()
                    except Exception:
                        logger.exception(
                            "leader election %s: on_stopped_leading failed", self._name
                        )

    async def _leader_work(self) -> None:
        await self._on_started()

    def _stop_leading(self) -> None:
        if self._leading and self._metrics is not None:
            self._metrics.leader_off(self._name)
        self._leading = False

    async def _renew(self) -> None:
        """Renew every ``retry_period``; return when a round misses its deadline (L9)."""
        cfg = self._config
        while True:
            await self._clock.sleep(cfg.retry_period)
            assert self._renewed_at is not None
            deadline = self._renewed_at + cfg.acting_horizon
            renewed = False
            async with move_on_at(self._clock, deadline):
                while True:
                    if await self._try_acquire_or_renew():
                        renewed = True
                        break
                    if self.leader != self._identity:
                        break  # someone else holds it now: no point retrying
                    await self._clock.sleep(cfg.retry_period)
            self._maybe_report_transition()
            if not renewed:
                return

    async def _try_acquire_or_renew(self) -> bool:
        """One attempt (L10). Any failure returns False; the caller decides when to retry."""
        cfg, lock, clock = self._config, self._lock, self._clock
        start = clock.monotonic()
        now = clock.now()
        desired = LeaderElectionRecord(
            holder_identity=self._identity,
            lease_duration_seconds=cfg.lease_duration_seconds,
            acquire_time=now,
            renew_time=now,
        )
        observed = self._observed_record
        # 1. Fast path: we hold a locally valid lease, so update without reading first.
        if (
            observed is not None
            and observed.holder_identity == self._identity
            and self._renewed_at is not None
            and start < self._renewed_at + cfg.lease_duration
        ):
            record = msgspec.structs.replace(
                desired,
                acquire_time=observed.acquire_time,
                leader_transitions=observed.leader_transitions,
            )
            try:
                await lock.update(record)
            except Exception as exc:
                logger.debug("leader election %s: fast-path renew failed: %r", self._name, exc)
                if self._metrics is not None:
                    self._metrics.slowpath_taken(self._name)
            else:
                self._wrote(record, start)
                return True
        # 2. Slow path: read the current record (create it when missing).
        try:
            old, raw = await lock.get()
        except NotFound:
            try:
                await lock.create(desired)
            except Exception as exc:
                level = logging.DEBUG if isinstance(exc, AlreadyExists) else logging.WARNING
                logger.log(level, "leader election %s: create failed: %r", self._name, exc)
                return False
            self._wrote(desired, start)
            return True
        except Exception as exc:
            logger.info("leader election %s: reading the lock failed: %r", self._name, exc)
            return False
        seen = clock.monotonic()
        if raw != self._observed_raw:
            self._observed_record, self._observed_raw, self._observed_time = old, raw, seen
        # 3. Held by someone else and not yet expired by *our* observation of it?
        holder = old.holder_identity
        if holder and holder != self._identity:
            duration = old.lease_duration_seconds or cfg.lease_duration
            if self._observed_time + duration > seen:
                return False
        # 4. Take it over (or renew what a previous write of ours left there).
        if holder == self._identity:
            record = msgspec.structs.replace(
                desired, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions
            )
        else:
            record = msgspec.structs.replace(desired, leader_transitions=old.leader_transitions + 1)
        try:
            await lock.update(record)
        except Exception as exc:
            # A conflict means someone else wrote first; the next attempt reads fresh state.
            level = logging.DEBUG if isinstance(exc, Conflict) else logging.INFO
            logger.log(level, "leader election %s: update failed: %r", self._name, exc)
            return False
        self._wrote(record, start)
        return True

    def _wrote(self, record: LeaderElectionRecord, started: float) -> None:
        # Measured from when the write was sent: the server applied it no earlier, and
        # candidates count the lease from when they read it, later still.
        self._observed_record = record
        self._observed_raw = None
        self._observed_time = started
        self._renewed_at = started

    async def _release(self) -> bool:
        """Write an empty holder if we still hold the lock (L12); bounded by renew_deadline."""
        lock, clock = self._lock, self._clock
        async with move_on_after(clock, self._config.renew_deadline):
            while True:
                try:
                    old, _raw = await lock.get()
                except Exception as exc:
                    logger.info("leader election %s: release could not read: %r", self._name, exc)
                    return False
                if old.holder_identity != self._identity:
                    return True
                now = clock.now()
                record = LeaderElectionRecord(
                    holder_identity="",
                    lease_duration_seconds=1,
                    acquire_time=now,
                    renew_time=now,
                    leader_transitions=old.leader_transitions,
                )
                try:
                    await lock.update(record)
                except Conflict:
                    continue
                except Exception as exc:
                    logger.info("leader election %s: release failed: %r", self._name, exc)
                    return False
                self._observed_record, self._observed_raw = record, None
                self._observed_time = clock.monotonic()
                self._renewed_at = None
                self._maybe_report_transition()
                logger.info("leader election %s: %s released the lock", self._name, self._identity)
                return True
        logger.info("leader election %s: release timed out", self._name)
        return False

    def _maybe_report_transition(self) -> None:
        record = self._observed_record
        if record is None or record.holder_identity == self._reported_leader:
            return
        self._reported_leader = record.holder_identity
        if self._on_new_leader is not None:
            try:
                self._on_new_leader(record.holder_identity)
            except Exception:
                logger.exception("leader election %s: on_new_leader failed", self._name)

    def _record_event(self, message: str) -> None:
        try:
            self._lock.record_event(message)
        except Exception:
            logger.exception("leader election %s: recording an event failed", self._name)
