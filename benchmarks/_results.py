"""A benchmark's result file (``benchmarks/results/<name>.json``) and its plot."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["pyplot", "result_summary", "save_plot", "write_results"]


def result_summary(settings: Mapping[str, Any], results: Mapping[str, Any]) -> dict[str, Any]:
    """The run's settings, then the machine's 1-minute load average (the machines are shared:
    the figures mean little without it), the Python version and the results."""
    return {
        **settings,
        "load_average": os.getloadavg()[0],
        "python": sys.version.split()[0],
        "results": results,
    }


def write_results(
    path: Path,
    summary: dict[str, Any],
    plot: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Write ``summary`` as indented JSON to ``path`` (making its folder), then draw
    ``plot(summary)`` if given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n")
    if plot is not None:
        plot(summary)


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files only, no display); matplotlib is
    imported only when a plot is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_plot(fig: Any, path: Path, *, dpi: int = 100) -> None:
    """Lay ``fig`` out tightly and save it to ``path`` (making its folder)."""
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
