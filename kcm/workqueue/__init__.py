"""Work queues for controllers: keys in, one worker per key at a time (client-go's workqueue).

Pipeline stage 6: informer handlers turn events into keys and :meth:`Queue.add` them; controller
workers take keys with ``async with queue.get_item() as key`` and reconcile them. Three layers:

* :class:`Queue`: deduplicating, stingy (never two workers on one key), fair (FIFO), with a
  shutdown that hands out the backlog before raising :class:`~kcm.errors.ShutDown`.
* :class:`DelayingQueue`: adds ``add_after(key, delay)`` on an injected clock.
* :class:`RateLimitingQueue`: adds ``add_rate_limited``/``forget``/``num_requeues`` through a
  :class:`RateLimiter` (client-go's limiters and defaults are provided).

Metrics use client-go's names and are injected per queue (:class:`PrometheusMetrics`).
"""

from ._delaying import DelayingQueue as DelayingQueue
from ._metrics import DelayMetrics as DelayMetrics
from ._metrics import MetricsProvider as MetricsProvider
from ._metrics import PrometheusMetrics as PrometheusMetrics
from ._metrics import QueueMetrics as QueueMetrics
from ._queue import Queue as Queue
from ._rate_limiters import BucketRateLimiter as BucketRateLimiter
from ._rate_limiters import ItemExponentialFailureRateLimiter as ItemExponentialFailureRateLimiter
from ._rate_limiters import ItemFastSlowRateLimiter as ItemFastSlowRateLimiter
from ._rate_limiters import MaxOfRateLimiter as MaxOfRateLimiter
from ._rate_limiters import RateLimiter as RateLimiter
from ._rate_limiters import WithMaxWaitRateLimiter as WithMaxWaitRateLimiter
from ._rate_limiters import default_controller_rate_limiter as default_controller_rate_limiter
from ._rate_limiting import RateLimitingQueue as RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "DelayMetrics",
    "DelayingQueue",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "PrometheusMetrics",
    "Queue",
    "QueueMetrics",
    "RateLimiter",
    "RateLimitingQueue",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
]
