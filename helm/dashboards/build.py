"""Build the Grafana dashboards of the chart from code (grafana-foundation-sdk).

The five dashboards are defined in ``boards.py`` as lists of panels, each with
its PromQL queries, so a review reads the queries, not 3,000 lines of JSON.
This script turns them into Grafana JSON with Grafana's own builder library
and writes ``helm/yarn-advisor/dashboards/<uid>.json``::

    python helm/dashboards/build.py           # write the JSON files
    python helm/dashboards/build.py --check   # exit 1 if a file is not what the code builds
    python helm/dashboards/build.py --table   # the panels and their queries, as Markdown

Every query uses only the advisor's own metrics and no template variable (the
data source is a variable of the panels, never of a query), and no ``rate()``:
counters are shown as totals and the latest cycle's gauges as time series, so
every panel has data from the first scrape on (a test checks each query on a
real Prometheus).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grafana_foundation_sdk.builders import bargauge, dashboard, prometheus, stat, table, timeseries
from grafana_foundation_sdk.builders.common import StackingConfig
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import StackingMode
from grafana_foundation_sdk.models.dashboard import DataSourceRef, GridPos, VariableOption
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

OUT = Path(__file__).resolve().parents[1] / "yarn-advisor" / "dashboards"
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")


@dataclass(frozen=True)
class Query:
    """One PromQL query of a panel and the legend of its series."""

    expr: str
    legend: str = ""


@dataclass(frozen=True)
class Panel:
    """A panel: ``kind`` is timeseries, stat, bargauge or table."""

    title: str
    description: str
    queries: Sequence[Query]
    kind: str = "timeseries"
    unit: str = "short"
    width: int = 12
    height: int = 8
    stacked: bool = False


@dataclass(frozen=True)
class Board:
    """A dashboard: rows of panels."""

    uid: str
    title: str
    description: str
    rows: Sequence[tuple[str, Sequence[Panel]]] = field(default_factory=tuple)


def _target(q: Query, ref: str, instant: bool, as_table: bool) -> prometheus.Dataquery:
    target = prometheus.Dataquery().expr(q.expr).ref_id(ref).datasource(DATASOURCE)
    if as_table:
        target = target.format(PromQueryFormat.TABLE)
    if q.legend:
        target = target.legend_format(q.legend)
    return target.instant() if instant else target.range()


def _panel(p: Panel) -> object:
    instant = p.kind in ("stat", "bargauge", "table")
    builder: (timeseries.Panel | stat.Panel | bargauge.Panel | table.Panel)
    if p.kind == "timeseries":
        builder = timeseries.Panel().fill_opacity(10).line_width(1)
        if p.stacked:
            builder = builder.stacking(StackingConfig().mode(StackingMode.NORMAL))
    elif p.kind == "stat":
        builder = stat.Panel()
    elif p.kind == "bargauge":
        builder = bargauge.Panel()
    elif p.kind == "table":
        builder = table.Panel()
    else:
        raise ValueError(f"unknown panel kind {p.kind!r}")
    builder = (builder.title(p.title).description(p.description).datasource(DATASOURCE)
               .unit(p.unit).grid_pos(GridPos(h=p.height, w=p.width)))
    for i, q in enumerate(p.queries):
        builder = builder.with_target(_target(q, chr(ord("A") + i), instant, p.kind == "table"))
    return builder


def build(board: Board) -> dict[str, object]:
    """The Grafana JSON model of ``board``."""
    dash = (dashboard.Dashboard(board.title).uid(board.uid).description(board.description)
            .tags(["yarn-advisor", "yarn"]).refresh("30s").time("now-1h", "now")
            .timezone("browser").editable()
            .with_variable(dashboard.DatasourceVariable("datasource").label("Data source")
                           .type("prometheus")
                           .current(VariableOption(text="default", value="default"))))
    for title, panels in board.rows:
        dash = dash.with_row(dashboard.Row(title))
        for p in panels:
            dash = dash.with_panel(_panel(p))  # type: ignore[arg-type]
    model = json.loads(json.dumps(dash.build(), cls=JSONEncoder))
    assert isinstance(model, dict)
    for n, panel in enumerate(model["panels"], start=1):  # unique ids, for links and sharing
        panel["id"] = n
    return model


def render(board: Board) -> str:
    """The file text of ``board`` (stable: sorted keys, two-space indent)."""
    return json.dumps(build(board), indent=2, sort_keys=True) + "\n"


def table_markdown(boards: Sequence[Board]) -> str:
    """Every panel of every dashboard with its queries, as a Markdown table."""
    lines = ["| dashboard | panel | queries |", "|---|---|---|"]
    for b in boards:
        for _, panels in b.rows:
            for p in panels:
                exprs = "<br>".join(f"`{q.expr.replace('|', '&#124;')}`" for q in p.queries)
                lines.append(f"| {b.title} | {p.title} | {exprs} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from boards import BOARDS  # the definitions live next to this file

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    ap.add_argument("--table", action="store_true", help="print the panels' queries")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.table:
        sys.stdout.write(table_markdown(BOARDS))
        return 0
    stale = []
    wanted = {f"{b.uid}.json": render(b) for b in BOARDS}
    for name, text in wanted.items():
        path = args.out / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    extra = sorted(p.name for p in args.out.glob("*.json") if p.name not in wanted)
    if args.check and (stale or extra):
        print(f"dashboards out of date: {stale + extra} (run python helm/dashboards/build.py)",
              file=sys.stderr)
        return 1
    for name in extra:
        (args.out / name).unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
