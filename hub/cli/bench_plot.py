"""The chart of ``hub bench --plot FILE``: actions/s by vector width, one bar per row.

Bars are grouped by width (one group per env and width), the raw libraries beside hub's rows
over them, on a log scale (the widths differ by 10x and more); RLlib's published 2018 figures
are a grey bar of their own. PNG or SVG, by the file's extension; drawn with matplotlib (Agg).

Example:
    >>> report = {"config": {"rows": ["gymnasium"], "widths": [1], "envs": ["CartPole-v1"]},
    ...           "reference": {"row": "RLlib 2018", "actions_per_s": {1: 2720.1}},
    ...           "cells": [{"row": "gymnasium", "env": "CartPole-v1", "width": 1,
    ...                      "median": 2.0e4, "min": 1.9e4, "max": 2.1e4}]}
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bench.png"
    >>> plot_report(report, path).exists()
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["plot_report"]


def plot_report(report: dict[str, Any], path: Path) -> Path:
    """Draw ``report`` (from :func:`hub.cli.bench.run_bench`) into ``path``; returns it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config = report["config"]
    groups = [(env, width) for env in config["envs"] for width in config["widths"]]
    series = [(report["reference"]["row"], None)] + [(row, row) for row in config["rows"]]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(groups) + 2), 4.5))
    bar = 0.8 / len(series)
    for i, (label, row) in enumerate(series):
        heights, lows, highs = [], [], []
        for env, width in groups:
            value = low = high = 0.0
            if row is None:
                seed = report["reference"]["actions_per_s"]
                value = (
                    float(seed.get(width, seed.get(str(width), 0.0)))
                    if env == "CartPole-v1"
                    else 0.0
                )
                low = high = value
            else:
                for cell in report["cells"]:
                    if (cell["row"], cell["env"], cell["width"]) == (row, env, width) and cell[
                        "median"
                    ]:
                        value, low, high = cell["median"], cell["min"], cell["max"]
            heights.append(value)
            lows.append(value - low)
            highs.append(high - value)
        xs = [g + (i - (len(series) - 1) / 2) * bar for g in range(len(groups))]
        color = "0.6" if row is None else None
        ax.bar(xs, heights, bar, yerr=[lows, highs], label=label, color=color, capsize=2)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{env}\nW={width}" for env, width in groups])
    ax.set_yscale("log")
    ax.set_ylabel("actions per second (one core)")
    ax.set_title("hub bench: RLlib's 2018 table on this machine (median, min-max)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
