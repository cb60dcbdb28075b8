"""The what-if report as one offline HTML page: the tables of ``to_text`` and three
plots drawn as inline SVG (no script, no font, nothing fetched): the memory
allocated over time, the CDF of job completion time, and the mean wait per queue.
Each plot shows every variant's first seed (the timeline and CDF) or its mean
over the seeds (the bars)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from yarn_advisor.simulator.whatif import Stat, WhatIf, to_text

W, H, PAD = 720, 260, 44
COLORS = ("#444444", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
          "#e377c2", "#17becf", "#bcbd22")


def to_html(w: WhatIf) -> str:
    """The page (a complete document)."""
    names = [v.variant for v in w.variants]
    timeline = [(v.variant, list(v.runs[0].timeline)) for v in w.variants if v.runs]
    cdf = [(v.variant, _cdf(v.runs[0].jct_s)) for v in w.variants if v.runs]
    queues = sorted({q for v in w.variants for q in v.queue_wait_s})
    bars = [(q, [v.queue_wait_s.get(q) for v in w.variants]) for q in queues]
    return "\n".join([
        "<!doctype html>", "<html><head><meta charset='utf-8'>",
        f"<title>yarn-advisor what-if: {escape(w.workload)}</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:60em}"
        "pre{background:#f6f6f6;padding:1em;overflow-x:auto}"
        "svg{border:1px solid #ddd;margin:.5em 0}</style></head><body>",
        f"<h1>What-if on {escape(w.workload)}</h1>",
        "<p>Each variant replays the same jobs on the simulated cluster: the baseline "
        "is the scheduler alone; the others run the advisor in enforce mode.</p>",
        f"<pre>{escape(to_text(w, top_users=20))}</pre>",
        "<h2>Memory allocated over time</h2>", _legend(names),
        _lines(timeline, "time (s)", "allocated memory share", y_max=1.0),
        "<h2>Job completion time (CDF)</h2>", _legend(names),
        _lines(cdf, "job completion time (s)", "share of jobs", y_max=1.0),
        "<h2>Mean wait per queue (s)</h2>", _legend(names), _bars(bars),
        "</body></html>"])


def _cdf(jcts: Sequence[float]) -> list[tuple[float, float]]:
    n = len(jcts)
    return [(x, (i + 1) / n) for i, x in enumerate(sorted(jcts))]


def _legend(names: Sequence[str]) -> str:
    items = "".join(f"<span style='color:{COLORS[i % len(COLORS)]}'>&#9632; {escape(n)}</span> "
                    for i, n in enumerate(names))
    return f"<div>{items}</div>"


def _frame(x_label: str, y_label: str, x_max: float, y_max: float) -> list[str]:
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='{H}' "
           f"viewBox='0 0 {W} {H}' role='img'>",
           f"<line x1='{PAD}' y1='{H - PAD}' x2='{W - 10}' y2='{H - PAD}' stroke='#000'/>",
           f"<line x1='{PAD}' y1='10' x2='{PAD}' y2='{H - PAD}' stroke='#000'/>",
           f"<text x='{W // 2}' y='{H - 8}' font-size='12' text-anchor='middle'>"
           f"{escape(x_label)}</text>",
           f"<text x='12' y='{H // 2}' font-size='12' text-anchor='middle' "
           f"transform='rotate(-90 12 {H // 2})'>{escape(y_label)}</text>"]
    for i in range(5):
        fx, fy = i / 4, i / 4
        px, py = PAD + fx * (W - PAD - 10), H - PAD - fy * (H - PAD - 10)
        out.append(f"<text x='{px:.0f}' y='{H - PAD + 14}' font-size='10' "
                   f"text-anchor='middle'>{fx * x_max:.4g}</text>")
        out.append(f"<text x='{PAD - 4}' y='{py + 3:.0f}' font-size='10' "
                   f"text-anchor='end'>{fy * y_max:.3g}</text>")
    return out


def _lines(series: Sequence[tuple[str, list[tuple[float, float]]]], x_label: str,
           y_label: str, y_max: float) -> str:
    x_max = max((x for _, pts in series for x, _ in pts), default=0.0) or 1.0
    out = _frame(x_label, y_label, x_max, y_max)
    for i, (_, pts) in enumerate(series):
        coords = " ".join(f"{PAD + x / x_max * (W - PAD - 10):.1f},"
                          f"{H - PAD - min(y, y_max) / y_max * (H - PAD - 10):.1f}"
                          for x, y in pts)
        if coords:
            out.append(f"<polyline fill='none' stroke='{COLORS[i % len(COLORS)]}' "
                       f"stroke-width='1.5' points='{coords}'/>")
    out.append("</svg>")
    return "".join(out)


def _bars(groups: Sequence[tuple[str, list[Stat | None]]]) -> str:
    y_max = max((s.mean for _, stats in groups for s in stats if s is not None),
                default=0.0) or 1.0
    out = _frame("queue", "mean wait (s)", 0.0, y_max)[:5]  # no x ticks: queue names
    span = (W - PAD - 10) / max(1, len(groups))
    for g, (queue, stats) in enumerate(groups):
        width = span * 0.8 / max(1, len(stats))
        for i, s in enumerate(stats):
            if s is None:
                continue
            h = s.mean / y_max * (H - PAD - 10)
            x = PAD + g * span + span * 0.1 + i * width
            out.append(f"<rect x='{x:.1f}' y='{H - PAD - h:.1f}' width='{width:.1f}' "
                       f"height='{h:.1f}' fill='{COLORS[i % len(COLORS)]}'>"
                       f"<title>{escape(queue)}: {s.mean:.1f} s</title></rect>")
        out.append(f"<text x='{PAD + (g + 0.5) * span:.0f}' y='{H - PAD + 14}' font-size='10' "
                   f"text-anchor='middle'>{escape(queue[:18])}</text>")
    out.append(f"<text x='{PAD - 4}' y='16' font-size='10' text-anchor='end'>{y_max:.3g}</text>")
    out.append("</svg>")
    return "".join(out)
