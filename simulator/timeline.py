"""The PNG timeline: memory allocated to each job over time (HaSTE Figs. 5 and 7).

One stacked band per job (an iterative job's iterations together), the
largest twenty by memory-seconds, the rest as "other jobs"; the dashed line
is the cluster's memory.

matplotlib is an optional dependency (``pip install yarn-advisor[sim]``),
imported only when a PNG is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from yarn_advisor.simulator.metrics import Sample

MAX_SERIES = 20


class TimelineError(RuntimeError):
    """The PNG could not be written (matplotlib missing, unwritable path)."""


def write_timeline(runs: Sequence[tuple[str, Sequence[Sample], int]], path: str | Path,
                   title: str = "") -> None:
    """One panel per run: (label, samples, cluster memory in MB)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise TimelineError("--png needs matplotlib: pip install 'yarn-advisor[sim]'") from None
    fig, axes = plt.subplots(len(runs), 1, figsize=(10, 3.2 * len(runs)), squeeze=False,
                             sharex=True)
    for ax, (label, samples, total_mb) in zip(axes[:, 0], runs, strict=True):
        _panel(ax, label, samples, total_mb)
    axes[-1, 0].set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    try:
        fig.savefig(str(path), dpi=100)
    except OSError as exc:
        raise TimelineError(f"cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)


def _by_job(sample: Sample) -> dict[str, int]:
    """Memory per job, the iterations of a chain (``pagerank#2``) counted as one job."""
    out: dict[str, int] = {}
    for app, mem in sample.per_app_mem.items():
        job = app.split("#", 1)[0]
        out[job] = out.get(job, 0) + mem
    return out


def _panel(ax: object, label: str, samples: Sequence[Sample], total_mb: int) -> None:
    import matplotlib.pyplot as plt

    per = [_by_job(s) for s in samples]
    totals: dict[str, int] = {}
    for row in per:
        for job, mem in row.items():
            totals[job] = totals.get(job, 0) + mem
    top = sorted(totals, key=lambda j: -totals[j])[:MAX_SERIES]
    shown = sorted(top)
    xs = [s.t_ms / 1000 for s in samples]
    series = [[row.get(j, 0) / 1024 for row in per] for j in shown]
    other = [(sum(row.values()) - sum(row.get(j, 0) for j in shown)) / 1024 for row in per]
    labels = list(shown)
    if any(other):
        series.append(other)
        labels.append("other jobs")
    colors = [plt.get_cmap("tab20")(i % 20) for i in range(len(series))]
    if xs and series:
        ax.stackplot(xs, *series, labels=labels, colors=colors,  # type: ignore[attr-defined]
                     step="post")
    ax.axhline(total_mb / 1024, color="black", linewidth=0.8,  # type: ignore[attr-defined]
               linestyle="--")
    ax.set_ylabel("memory (GB)")  # type: ignore[attr-defined]
    ax.set_title(label, fontsize=10)  # type: ignore[attr-defined]
    if len(labels) <= 12:
        ax.legend(loc="upper right", fontsize=7, ncol=2)  # type: ignore[attr-defined]
