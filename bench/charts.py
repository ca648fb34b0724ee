"""Line charts of a latency against a size on a log scale, as `docs/performance.md` shows them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def size_chart(
    path: Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    sizes: Sequence[int],
    series: Mapping[str, tuple[Sequence[float], str]],
) -> None:
    """One line per series (label → values per size, line style), sizes on a log x axis."""
    from matplotlib.figure import Figure  # Agg by default, no pyplot state: fine headless

    figure = Figure(figsize=(8, 5), layout="constrained")
    axes = figure.subplots()
    for label, (values, style) in series.items():
        axes.plot(sizes, values, style, marker="o", label=label)
    axes.set_xscale("log")
    axes.set_xticks(list(sizes), [f"{n:,}" for n in sizes])
    axes.minorticks_off()
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_ylim(bottom=0)
    axes.set_title(title)
    axes.grid(True, which="major", alpha=0.4)
    axes.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
