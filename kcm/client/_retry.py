"""When and how long to wait before retrying a request (client-go's ``WithRetry``).

* ``GET`` (get, list, discovery) is idempotent: it is retried after a transport failure (a
  reset, an EOF, a timeout) and after 429/500/502/503/504. A refused connection, an unknown
  host or an untrusted certificate is not retried (``ConnectionFailed``,
  ``TlsVerificationFailed``): retrying the same URL at once cannot fix it (client-go does the
  same); the reflector's and the elector's own backoff cover a server that is restarting.
* Any other verb is retried only when the server asked for it: a 429 or 5xx **with**
  ``Retry-After`` (client-go ``checkWait``).
* Watches are never retried here; the reflector owns that loop.
* At most :attr:`RetryPolicy.max_tries` attempts; the wait is ``Retry-After`` when given (capped
  at ``max_delay``), else a jittered exponential backoff.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["RetryPolicy"]

RETRY_CODES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded, jittered retry of failed requests.

    Attributes:
        max_tries: attempts in total, the first included (client-go uses 10).
        base_delay: backoff before the second attempt when the server gave no hint.
        max_delay: cap of any single wait (also for ``Retry-After``).
    """

    max_tries: int = 10
    base_delay: float = 0.2
    max_delay: float = 30.0

    def should_retry(
        self, *, method: str, attempt: int, status: int | None, retry_after: float | None
    ) -> bool:
        """Whether attempt number ``attempt`` (1-based), which failed, may be tried again.

        ``status`` is None for a transport failure.
        """
        if attempt >= self.max_tries:
            return False
        idempotent = method in ("GET", "HEAD")
        if status is None:
            return idempotent
        if status not in RETRY_CODES:
            return False
        return idempotent or retry_after is not None

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(self.max_delay, max(0.0, retry_after))
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        jitter: float = random.uniform(0.5, 1.0)
        return backoff * jitter
