"""The report's plots as PNG: AbsRec@K curves, cumulative over-abstention by turn, paired accuracy per group.

Each function draws from the numbers of a report (:func:`agentabstain_gym.core.metrics.report`) and returns the
series it drew, so a test can check that a picture shows the report's numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PLOT_FILES = ("absrec_at_k.png", "over_abstention_by_turn.png", "paired_accuracy.png")


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise RuntimeError("plots need matplotlib: pip install matplotlib (the [plot] extra)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _series_by_agent(per_agent: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {agent: rep["overall"] for agent, rep in per_agent.items()}


def _line_plot(series: dict[str, list], path: Path, *, xlabel: str, ylabel: str, title: str) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for agent, ys in series.items():
        ax.plot(range(1, len(ys) + 1), [float("nan") if y is None else y for y in ys], marker="o", label=agent)
    ax.set(xlabel=xlabel, ylabel=ylabel, ylim=(-0.02, 1.02), title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def absrec_curves(per_agent: dict[str, dict[str, Any]], path: Path, max_k: int = 10) -> dict[str, list]:
    """Plot AbsRec@K for K = 1..``max_k``, one line per agent, to ``path``; returns the plotted series."""
    series = {}
    for agent, m in _series_by_agent(per_agent).items():
        ys = [m.get(f"absrec@{k}") for k in range(1, max_k + 1)]
        if any(y is not None for y in ys):
            series[agent] = ys
    _line_plot(series, path, xlabel="K (turns after the earliest justified turn)", ylabel="AbsRec@K",
               title="Abstention recall within K turns")
    return series


def over_abstention_curves(per_agent: dict[str, dict[str, Any]], path: Path) -> dict[str, list]:
    """Plot the cumulative over-abstention by turn, one line per agent, to ``path``; returns the series."""
    series = {agent: m["over_abstention_by_turn"] for agent, m in _series_by_agent(per_agent).items()
              if m.get("over_abstention_by_turn")}
    _line_plot(series, path, xlabel="turn t", ylabel="share of solvable episodes abstained by t",
               title="Cumulative over-abstention by turn")
    return series


def paired_accuracy_bars(per_agent: dict[str, dict[str, Any]], path: Path) -> dict[str, dict[str, float]]:
    """Paired accuracy per scenario where the records have scenarios, else per category."""
    plt = _pyplot()
    section = "by_scenario" if any(rep["by_scenario"] for rep in per_agent.values()) else "by_category"
    groups = sorted({g for rep in per_agent.values() for g, m in rep[section].items()
                     if m.get("paired_accuracy") is not None})
    series: dict[str, dict[str, float]] = {}
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(groups) + 2), 4))
    width = 0.8 / max(1, len(per_agent))
    for i, (agent, rep) in enumerate(per_agent.items()):
        values = {g: rep[section].get(g, {}).get("paired_accuracy") for g in groups}
        series[agent] = {g: v for g, v in values.items() if v is not None}
        ax.bar([j + i * width for j in range(len(groups))], [values[g] or 0.0 for g in groups], width, label=agent)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))], groups, rotation=30, ha="right", fontsize=8)
    ax.set(ylabel="paired accuracy", ylim=(0, 1.02), title=f"Paired accuracy {section.replace('_', ' ')}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return series


def write_plots(per_agent: dict[str, dict[str, Any]], directory: str | Path) -> dict[str, Any]:
    """All three plots into ``directory``; returns ``{file name: plotted series}``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    a, b, c = (directory / name for name in PLOT_FILES)
    return {a.name: absrec_curves(per_agent, a), b.name: over_abstention_curves(per_agent, b),
            c.name: paired_accuracy_bars(per_agent, c)}
