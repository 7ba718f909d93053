"""Log setup for ``kcm run``: klog's text lines or component-base's JSON on stderr, or rich's
handler above the live status view.

The library only logs (it never configures handlers); this module is the one place that
does. ``-v`` has klog's meaning, mapped onto Python's levels (:func:`klog_level`): 0 errors,
warnings and start-up lines (INFO), 2 steady-state information, 4 debug (DEBUG), 6 a line
per API request, 7 request headers, 8 bodies (truncated), 9 whole bodies. Third-party
loggers (HTTP libraries, hypercorn) say only warnings below 9.

Text lines keep klog's header, ``I1126 07:00:00.000000   12345 file.py:123] msg k="v"``, so
tools that parse kube-controller-manager's logs read kcm's; a module named ``_x.py`` shows
with its package (``replicaset/_controller.py``), as a bare ``_controller.py`` would say
nothing.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "JsonFormatter",
    "TextFormatter",
    "configure_logging",
    "console",
    "klog_level",
    "klog_verbosity",
]

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
_NOISY = (
    "httpx",
    "httpcore",
    "hypercorn",
    "hypercorn.access",
    "hypercorn.error",
    "aiohttp",
    "kcm.runtime.http",
    "kcm.apiserver.hypercorn",
)
"""Loggers of the HTTP stacks: their INFO is plumbing ("Running on ..."), shown from -v=9."""

_LEVELS = {0: 20, 1: 19, 2: 15, 3: 12, 4: 10, 5: 9, 6: 8, 7: 7, 8: 6, 9: 5, 10: 4}
"""klog verbosity → Python level: 0 is INFO, 4 is DEBUG, 6-9 are the client's request lines
(``kcm.client.requests`` logs at 8, 7, 6 and 5)."""

_console: Any = None


def klog_level(verbosity: int) -> int:
    """The Python level a ``-v`` shows down to (above 10 as 10)."""
    return _LEVELS[min(max(verbosity, 0), 10)]


def klog_verbosity(levelno: int) -> int:
    """The ``-v`` a record of ``levelno`` needs (0 for INFO and above)."""
    for verbosity in range(11):
        if levelno >= _LEVELS[verbosity]:
            return verbosity
    return 10


def console() -> Any:
    """The rich Console shared by the log handler and the status view (created on first use)."""
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(stderr=False)
    return _console


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


def _caller(record: logging.LogRecord) -> str:
    name = record.filename
    if name.startswith("_"):
        name = f"{os.path.basename(os.path.dirname(record.pathname))}/{name}"
    return f"{name}:{record.lineno}"


def _severity(levelno: int) -> str:
    if levelno >= logging.CRITICAL:
        return "F"
    if levelno >= logging.ERROR:
        return "E"
    if levelno >= logging.WARNING:
        return "W"
    return "I"


class TextFormatter(logging.Formatter):
    """klog's header, the message, then extras as ``key="value"`` pairs (the controller, key
    and reconcile id of a reconcile error); a traceback, if any, on the lines after."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC).strftime("%m%d %H:%M:%S.%f")
        line = (
            f"{_severity(record.levelno)}{when} {record.process or 0:7d} {_caller(record)}] "
            f"{record.getMessage()}"
        )
        pairs = " ".join(f"{k}={json.dumps(str(v))}" for k, v in _extras(record).items())
        if pairs:
            line = f"{line} {pairs}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


class JsonFormatter(logging.Formatter):
    """component-base's JSON lines: ``ts`` (milliseconds since the epoch), ``caller``,
    ``msg``, ``v`` (info) or ``err`` (errors), then the extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created * 1000, 3),
            "caller": _caller(record),
            "msg": record.getMessage(),
        }
        if record.levelno >= logging.ERROR:
            if record.exc_info and record.exc_info[1] is not None:
                entry["err"] = str(record.exc_info[1]) or type(record.exc_info[1]).__name__
        else:
            entry["v"] = klog_verbosity(record.levelno)
        entry.update({k: str(v) for k, v in _extras(record).items()})
        if record.exc_info:
            entry["stacktrace"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure_logging(*, verbosity: int = 0, fmt: str = "text", rich_console: bool = False) -> None:
    """Install one root handler (replacing earlier ones) for ``kcm run``.

    Args:
        verbosity: klog's ``-v`` level.
        fmt: ``"text"`` or ``"json"`` (ignored with ``rich_console``).
        rich_console: log through rich to the shared :func:`console`, so lines appear
            above the live status view instead of tearing it.
    """
    for v, level in _LEVELS.items():
        if level not in (logging.INFO, logging.DEBUG):
            logging.addLevelName(level, f"V{v}")
    handler: logging.Handler
    if rich_console:
        from rich.logging import RichHandler

        handler = RichHandler(console=console(), show_path=False, rich_tracebacks=False)
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(klog_level(verbosity))
    for name in _NOISY:
        logging.getLogger(name).setLevel(logging.DEBUG if verbosity >= 9 else logging.WARNING)
