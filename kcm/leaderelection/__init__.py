"""Leader election: several replicas, exactly one active (client-go ``tools/leaderelection``).

A :class:`LeaderElector` competes for a lock (:class:`LeaseLock`, or :class:`ConfigMapLock`
and :class:`MultiLock` for migrations) with optimistic-concurrency writes, runs the leader's
work in a cancel scope that is cancelled before the lease can expire, and optionally releases
the lease on shutdown. See ``docs/leader-election.md`` for the guarantees and their limits.
"""

from ._config import JITTER_FACTOR as JITTER_FACTOR
from ._config import LeaderElectionConfig as LeaderElectionConfig
from ._elector import LeaderElector as LeaderElector
from ._healthz import HealthzAdaptor as HealthzAdaptor
from ._lease_lock import LEADER_ANNOTATION as LEADER_ANNOTATION
from ._lease_lock import ConfigMapLock as ConfigMapLock
from ._lease_lock import LeaseLock as LeaseLock
from ._memory_lock import InMemoryLock as InMemoryLock
from ._memory_lock import InMemoryLockStore as InMemoryLockStore
from ._metrics import LeaderElectionMetrics as LeaderElectionMetrics
from ._multilock import MultiLock as MultiLock
from ._record import UNKNOWN_LEADER as UNKNOWN_LEADER
from ._record import LeaderElectionRecord as LeaderElectionRecord
from ._record import default_identity as default_identity
from ._resourcelock import ResourceLock as ResourceLock

__all__ = [
    "JITTER_FACTOR",
    "LEADER_ANNOTATION",
    "UNKNOWN_LEADER",
    "ConfigMapLock",
    "HealthzAdaptor",
    "InMemoryLock",
    "InMemoryLockStore",
    "LeaderElectionConfig",
    "LeaderElectionMetrics",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "MultiLock",
    "ResourceLock",
    "default_identity",
]
