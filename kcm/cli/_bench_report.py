"""``kcm bench``'s output: the result table (rich) and ``--plot`` (matplotlib)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

__all__ = ["plot", "rates", "table"]


def rates(row: dict[str, Any]) -> dict[str, float]:
    """A measured row's figures: objects/s, events/s, CPU µs per object and per event, KB per
    object (0 where nothing was measured)."""

    def per(n: float, d: float) -> float:
        return n / d if d > 0 else 0.0

    return {
        "list_per_s": per(row["objects"], row["list_seconds"]),
        "watch_per_s": per(row["events"], row["watch_seconds"]),
        "list_cpu_us": per(row["list_cpu_seconds"] * 1e6, row["objects"]),
        "watch_cpu_us": per(row["watch_cpu_seconds"] * 1e6, row["events"]),
        "kb_per_object": row["bytes_per_object"] / 1024,
    }


def table(rows: list[dict[str, Any]]) -> Table:
    """One line per client: list and watch rates, the client's CPU per item, memory."""
    out = Table(title="informer throughput (rates per wall-clock second; CPU of the client)")
    for name, justify in (
        ("client", "left"),
        ("objects", "right"),
        ("list objects/s", "right"),
        ("CPU µs/object", "right"),
        ("events", "right"),
        ("watch events/s", "right"),
        ("CPU µs/event", "right"),
        ("KB/object", "right"),
    ):
        out.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        if "error" in row:
            out.add_row(row["label"], f"error: {row['error']}", *[""] * 6)
            continue
        r = rates(row)
        out.add_row(
            row["label"],
            f"{row['objects']:,}",
            f"{r['list_per_s']:,.0f}",
            f"{r['list_cpu_us']:,.1f}",
            f"{row['events']:,}",
            f"{r['watch_per_s']:,.0f}" if row["events"] else "-",
            f"{r['watch_cpu_us']:,.1f}" if row["events"] else "-",
            f"{r['kb_per_object']:,.1f}",
        )
    return out


def plot(rows: list[dict[str, Any]], path: str, *, title: str) -> None:
    """Three bar charts (list objects/s, watch events/s, KB per object) into ``path``."""
    import importlib

    matplotlib: Any = importlib.import_module("matplotlib")  # optional; not type-checked
    matplotlib.use("Agg")
    plt: Any = importlib.import_module("matplotlib.pyplot")

    good = [row for row in rows if "error" not in row]
    labels = [row["label"] for row in good]
    figures = [rates(row) for row in good]
    fig, axes = plt.subplots(1, 3, figsize=(14, 1.6 + 0.5 * len(good)))
    for ax, (key, name) in zip(
        axes,
        (
            ("list_per_s", "LIST, objects/s"),
            ("watch_per_s", "WATCH, events/s"),
            ("kb_per_object", "memory, KB per cached object"),
        ),
        strict=True,
    ):
        ax.barh(labels, [f[key] for f in figures], color="tab:blue")
        ax.invert_yaxis()
        ax.set_title(name, fontsize=10)
        if ax is not axes[0]:
            ax.set_yticklabels([])
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
