"""Log setup for ``kcm run``: plain structured lines (text or JSON) on stderr, or rich's
handler above the live status view.

The library only logs (it never configures handlers); this module is the one place that
does. Verbosity follows klog's ``-v``: 0 shows INFO from kcm and warnings from the HTTP
stack, 4 and up show kcm's DEBUG, 6 and up the HTTP stack's too.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

__all__ = ["JsonFormatter", "TextFormatter", "configure_logging", "console"]

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
_NOISY = ("httpx", "httpcore", "hypercorn", "hypercorn.access", "hypercorn.error", "aiohttp")

_console: Any = None


def console() -> Any:
    """The rich Console shared by the log handler and the status view (created on first use)."""
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(stderr=False)
    return _console


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class TextFormatter(logging.Formatter):
    """``2026-01-02T03:04:05.678Z INFO kcm.runtime: message key=value ...`` (extras as
    logfmt pairs, e.g. the controller, key and reconcile_id of a reconcile error)."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
        line = f"{when[:-3]}Z {record.levelname} {record.name}: {record.getMessage()}"
        pairs = " ".join(f"{k}={json.dumps(str(v))}" for k, v in _extras(record).items())
        if pairs:
            line = f"{line} {pairs}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``msg``, extras, ``exc``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update({k: str(v) for k, v in _extras(record).items()})
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure_logging(*, verbosity: int = 0, fmt: str = "text", rich_console: bool = False) -> None:
    """Install one root handler (replacing earlier ones) for ``kcm run``.

    Args:
        verbosity: klog-style ``-v`` level.
        fmt: ``"text"`` or ``"json"`` (ignored with ``rich_console``).
        rich_console: log through rich to the shared :func:`console`, so lines appear
            above the live status view instead of tearing it.
    """
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
    root.setLevel(logging.DEBUG if verbosity >= 4 else logging.INFO)
    for name in _NOISY:
        logging.getLogger(name).setLevel(logging.DEBUG if verbosity >= 6 else logging.WARNING)
