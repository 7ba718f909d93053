"""``kcm bench``'s flags (usage errors exit 2 before anything starts) and its report."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from rich.console import Console

from kcm.cli._bench_report import rates, table
from kcm.cli._main import main


def _exit_status(argv: list[str]) -> int | str | None:
    """``main``'s status, whether returned (checks after parsing) or raised (argparse)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--objects", "-1"], "--objects"),
        (["--updates", "x"], "--updates"),
        (["--resource", "deployments"], "is not pods, configmaps or GROUP/VERSION/RESOURCE"),
        (["--resource", "apps/v1/deployments"], "--objects 0 --updates 0"),
        (["--resource", "v1/secrets", "--objects", "0", "--updates", "0", "--peers"], "--peers"),
        (["--kubeconfig", "/nonexistent/kubeconfig"], "no such file"),
        (["--objects", "0", "--updates", "5"], "--updates needs objects"),
        (["--no-such-flag"], "unrecognized arguments"),
    ],
)
def test_bad_flags_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _exit_status(["bench", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert message in err


def test_plot_without_matplotlib_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "matplotlib" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert main(["bench", "--plot", "out.png"]) == 2
    assert capsys.readouterr().err == (
        "kcm bench: error: --plot needs matplotlib: install matplotlib (pip install "
        "matplotlib); see kcm bench --help\n"
    )


ROW = {
    "label": "kcm informer",
    "objects": 2000,
    "events": 500,
    "list_seconds": 0.5,
    "list_cpu_seconds": 0.1,
    "watch_seconds": 0.25,
    "watch_cpu_seconds": 0.02,
    "bytes_per_object": 10240.0,
}


def test_rates_are_per_wall_second_and_cpu_per_item() -> None:
    assert rates(ROW) == {
        "list_per_s": 4000.0,
        "watch_per_s": 2000.0,
        "list_cpu_us": 50.0,
        "watch_cpu_us": 40.0,
        "kb_per_object": 10.0,
    }
    assert rates({**ROW, "events": 0, "watch_seconds": 0.0})["watch_per_s"] == 0.0


def test_the_table_has_a_line_per_client_and_shows_errors() -> None:
    console = Console(width=160, record=True)
    console.print(table([ROW, {"label": "lightkube", "error": "timed out after 600s"}]))
    text = console.export_text()
    assert "kcm informer" in text
    assert "4,000" in text
    assert "2,000" in text
    assert "10.0" in text
    assert "lightkube" in text
    assert "error: timed out after 600s" in text
