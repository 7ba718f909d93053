"""The event loop the commands run on: asyncio, on uvloop when it is installed.

uvloop (libuv, with its own TLS transport) spends about half of what asyncio's pure-Python
selector loop and SSL protocol spend per request; a controller manager and an API server are
mostly requests. ``KCM_EVENT_LOOP=asyncio`` keeps the standard loop (to compare, or to rule
uvloop out when chasing a bug).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

__all__ = ["run_event_loop", "uses_uvloop"]


def uses_uvloop() -> bool:
    """Whether :func:`run_event_loop` runs on uvloop: installed, and not turned off."""
    if os.environ.get("KCM_EVENT_LOOP", "") == "asyncio":
        return False
    return importlib.util.find_spec("uvloop") is not None


def run_event_loop(main: Callable[[], Awaitable[Any]]) -> Any:
    """``anyio.run(main)`` on asyncio, with uvloop when :func:`uses_uvloop`."""
    return anyio.run(main, backend="asyncio", backend_options={"use_uvloop": uses_uvloop()})
