"""Shared fixtures for the model tests: the benchmark corpus (a realistic pod)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

_CORPUS = Path(__file__).resolve().parents[3] / "benchmarks" / "_corpus.py"


def _load_corpus() -> ModuleType:
    name = "kcm_bench_corpus"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _CORPUS)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def corpus() -> ModuleType:
    return _load_corpus()
