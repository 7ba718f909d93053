"""Wait for the API server before starting anything, saying so once per backoff step.

kube-controller-manager polls ``/healthz`` before it builds its controllers (10 s, then it
exits and its pod restarts). kcm polls the same endpoint with a backoff (1 s doubling to
30 s) and keeps waiting: the one line per attempt says where and why, so
``kcm --master http://127.0.0.1:1`` explains itself at once instead of going quiet.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from kcm.clock import SYSTEM_CLOCK, Clock

__all__ = ["probe_api_server", "wait_for_api_server"]

logger = logging.getLogger("kcm.cli")

FIRST_DELAY = 1.0
MAX_DELAY = 30.0
_TIMEOUT = 5.0


async def _problem(client: Any) -> str | None:
    """None when the server answers (any status but 5xx: an RBAC 403 means it is up)."""
    try:
        response = await client.http.get("/healthz", timeout=_TIMEOUT)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if response.status_code >= 500:
        body = " ".join(response.text.split())[:200]
        return f"APIServer isn't healthy: {response.status_code} {body}"
    return None


async def probe_api_server(client: Any, url: str) -> bool:
    """One attempt, said at once if it fails (before the slower start-up work); pass the
    result to :func:`wait_for_api_server` as ``failed_once``."""
    problem = await _problem(client)
    if problem is not None:
        logger.warning("waiting for API server at %s: %s; retrying", url, problem)
    return problem is not None


async def wait_for_api_server(
    client: Any, url: str, *, clock: Clock = SYSTEM_CLOCK, failed_once: bool = False
) -> int:
    """Return once ``url`` answers ``/healthz``; returns how many attempts failed.

    ``failed_once``: :func:`probe_api_server` failed (and said so) just before: the first
    backoff step is slept before asking again.
    """
    delay, failed = FIRST_DELAY, int(failed_once)
    if failed_once:
        await clock.sleep(delay)
        delay *= 2
    while (problem := await _problem(client)) is not None:
        failed += 1
        logger.warning("waiting for API server at %s: %s; retrying", url, problem)
        await clock.sleep(delay)
        delay = min(delay * 2, MAX_DELAY)
    if failed:
        logger.info("API server at %s is reachable", url)
    return failed
