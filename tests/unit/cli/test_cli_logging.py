"""Log lines: text with logfmt extras, or JSON, one per record."""

from __future__ import annotations

import json
import logging

from kcm.cli._logging import JsonFormatter, TextFormatter, configure_logging


def record() -> logging.LogRecord:
    r = logging.LogRecord("kcm.runtime", logging.ERROR, "f", 1, "reconcile %s failed", ("x",), None)
    r.controller = "deployment"
    r.key = "default/web"
    return r


def test_text_lines_carry_extras_as_pairs() -> None:
    line = TextFormatter().format(record())
    assert line.endswith(
        'ERROR kcm.runtime: reconcile x failed controller="deployment" key="default/web"'
    )
    assert line[:4].isdigit()
    assert "Z " in line


def test_json_lines() -> None:
    entry = json.loads(JsonFormatter().format(record()))
    assert entry["level"] == "ERROR"
    assert entry["msg"] == "reconcile x failed"
    assert entry["controller"] == "deployment"
    assert entry["logger"] == "kcm.runtime"


def test_verbosity_levels() -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, logging.getLogger("httpx").level)
    try:
        configure_logging(verbosity=0)
        assert root.level == logging.INFO
        assert logging.getLogger("httpx").level == logging.WARNING
        configure_logging(verbosity=4, fmt="json")
        assert root.level == logging.DEBUG
        assert isinstance(root.handlers[-1].formatter, JsonFormatter)
        assert logging.getLogger("httpx").level == logging.WARNING
        configure_logging(verbosity=6)
        assert logging.getLogger("httpx").level == logging.DEBUG
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("httpx").setLevel(saved[2])
        for name in ("httpcore", "hypercorn", "hypercorn.access", "hypercorn.error", "aiohttp"):
            logging.getLogger(name).setLevel(logging.NOTSET)
