"""Log lines: klog's text header with key="value" extras, or component-base's JSON; -v as
klog's verbosity."""

from __future__ import annotations

import json
import logging
import re

import pytest

from kcm.cli._logging import (
    JsonFormatter,
    TextFormatter,
    configure_logging,
    klog_level,
    klog_verbosity,
)


def record(level: int = logging.ERROR) -> logging.LogRecord:
    r = logging.LogRecord(
        "kcm.runtime",
        level,
        "/src/kcm/runtime/_controller.py",
        123,
        "reconcile %s failed",
        ("x",),
        None,
    )
    r.controller = "deployment"
    r.key = "default/web"
    return r


def test_text_lines_have_klogs_header_and_extras_as_pairs() -> None:
    line = TextFormatter().format(record())
    assert re.fullmatch(
        r"E\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ runtime/_controller\.py:123\] reconcile x failed "
        r'controller="deployment" key="default/web"',
        line,
    ), line
    assert TextFormatter().format(record(logging.WARNING))[0] == "W"
    assert TextFormatter().format(record(15))[0] == "I"


def test_json_lines_are_component_bases() -> None:
    entry = json.loads(JsonFormatter().format(record(logging.INFO)))
    assert entry["msg"] == "reconcile x failed"
    assert entry["v"] == 0
    assert entry["caller"] == "runtime/_controller.py:123"
    assert entry["controller"] == "deployment"
    assert isinstance(entry["ts"], float)
    assert json.loads(JsonFormatter().format(record(15)))["v"] == 2
    error = record()
    try:
        raise ValueError("boom")
    except ValueError as exc:
        error.exc_info = (ValueError, exc, exc.__traceback__)
    entry = json.loads(JsonFormatter().format(error))
    assert (entry["err"], "v" in entry) == ("boom", False)


@pytest.mark.parametrize(
    ("v", "level"), [(0, 20), (1, 19), (2, 15), (3, 12), (4, 10), (6, 8), (7, 7), (8, 6), (9, 5)]
)
def test_klog_verbosity_maps_onto_python_levels(v: int, level: int) -> None:
    assert klog_level(v) == level
    assert klog_verbosity(level) == v


def test_verbosity_levels() -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, logging.getLogger("httpx").level)
    try:
        configure_logging(verbosity=0)
        assert root.level == logging.INFO
        assert logging.getLogger("httpx").level == logging.WARNING
        configure_logging(verbosity=2)
        assert root.isEnabledFor(15)
        assert not root.isEnabledFor(logging.DEBUG)
        configure_logging(verbosity=4, fmt="json")
        assert root.level == logging.DEBUG
        assert isinstance(root.handlers[-1].formatter, JsonFormatter)
        assert logging.getLogger("httpx").level == logging.WARNING
        configure_logging(verbosity=6)
        assert logging.getLogger("kcm.client.requests").isEnabledFor(8)
        assert not logging.getLogger("kcm.client.requests").isEnabledFor(7)
        configure_logging(verbosity=9)
        assert logging.getLogger("httpx").level == logging.DEBUG
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("httpx").setLevel(saved[2])
        for name in (
            "httpcore",
            "hypercorn",
            "hypercorn.access",
            "hypercorn.error",
            "aiohttp",
            "kcm.runtime.http",
            "kcm.apiserver.hypercorn",
        ):
            logging.getLogger(name).setLevel(logging.NOTSET)
