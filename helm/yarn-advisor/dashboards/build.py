"""Builds the Grafana dashboards of the chart from ``panels.py``.

    .venv/bin/python helm/yarn-advisor/dashboards/build.py           # write *.json, PANELS.md
    .venv/bin/python helm/yarn-advisor/dashboards/build.py --check   # exit 1 if out of date

Uses grafana-foundation-sdk, Grafana's own typed dashboard builders (generated
from Grafana's schemas, so a field Grafana does not know cannot be written),
pinned in the [test] extra: the JSON it emits is committed and reviewed, and
the chart ships it as ConfigMaps for Grafana's dashboard sidecar. Every
dashboard has the variables ``datasource`` (a Prometheus), ``job`` and
``instance`` (which advisor); the actions dashboard adds ``policy``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grafana_foundation_sdk.builders import common, dashboard, prometheus, stat, table, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import StackingMode
from grafana_foundation_sdk.models.dashboard import (
    DashboardCursorSync,
    DashboardLinkType,
    DataSourceRef,
    VariableRefresh,
    VariableSort,
)
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from panels import BOARDS, NS, Board, Panel  # noqa: E402

DS = DataSourceRef(type_val="prometheus", uid="${datasource}")
ANCHOR = f"{NS}_cycles_total"  # every advisor exports it from its first scrape on
REF_IDS = "ABCDEFGH"


def variables(board: Board) -> list[dashboard.DatasourceVariable | dashboard.QueryVariable]:
    out: list[dashboard.DatasourceVariable | dashboard.QueryVariable] = [
        dashboard.DatasourceVariable("datasource").label("Prometheus").type("prometheus"),
        dashboard.QueryVariable("job").label("Job").datasource(DS)
        .query(f"label_values({ANCHOR}, job)")
        .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).sort(VariableSort.ALPHABETICAL_ASC),
        dashboard.QueryVariable("instance").label("Instance").datasource(DS)
        .query(f'label_values({ANCHOR}{{job="$job"}}, instance)')
        .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).sort(VariableSort.ALPHABETICAL_ASC)
        .multi(True).include_all(True).all_value(".*"),
    ]
    if board.policy_variable:
        out.append(
            dashboard.QueryVariable("policy").label("Policy").datasource(DS)
            .query(f'label_values({NS}_policy_seconds{{job="$job"}}, policy)')
            .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).sort(VariableSort.ALPHABETICAL_ASC)
            .multi(True).include_all(True).all_value(".*"))
    return out


def render_panel(panel: Panel, panel_id: int) -> stat.Panel | table.Panel | timeseries.Panel:
    """One panel: time series run range queries, stats and tables instant ones."""
    built: stat.Panel | table.Panel | timeseries.Panel
    if panel.kind == "timeseries":
        built = timeseries.Panel().fill_opacity(10)
        if panel.stacked:
            built = built.stacking(common.StackingConfig().mode(StackingMode.NORMAL))
    elif panel.kind == "stat":
        built = stat.Panel().reduce_options(common.ReduceDataOptions().calcs(["lastNotNull"]))
    else:
        built = table.Panel()
    built = (built.id(panel_id).title(panel.title).description(panel.description)
             .datasource(DS).unit(panel.unit).span(panel.width).height(panel.height))
    for ref, query in zip(REF_IDS, panel.queries, strict=False):
        target = prometheus.Dataquery().ref_id(ref).expr(query.expr).datasource(DS)
        if query.legend:
            target = target.legend_format(query.legend)
        target = target.range() if panel.kind == "timeseries" else target.instant()
        if panel.kind == "table":
            target = target.format(PromQueryFormat.TABLE)
        built = built.with_target(target)
    return built


def render(board: Board) -> str:
    """The dashboard's JSON text (stable: sorted keys, fixed ids)."""
    d = (dashboard.Dashboard(board.title).uid(board.uid).description(board.description)
         .tags(list(board.tags)).refresh("30s").time("now-1h", "now").timezone("browser")
         .tooltip(DashboardCursorSync.CROSSHAIR).editable()
         .link(dashboard.DashboardLink("YARN advisor").type(DashboardLinkType.DASHBOARDS)
               .tags(["yarn-advisor"]).as_dropdown(True).include_vars(True).keep_time(True)))
    for var in variables(board):
        d = d.with_variable(var)
    panel_id = 0
    for row in board.rows:
        panel_id += 1
        d = d.with_row(dashboard.Row(row.title).id(panel_id))
        for panel in row.panels:
            panel_id += 1
            d = d.with_panel(render_panel(panel, panel_id))
    return json.dumps(d.build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def panels_table() -> str:
    """PANELS.md: every panel of every dashboard with its queries (for the README)."""
    lines = ["# Dashboard panels and their queries", "",
             "Generated by `build.py` from `panels.py`; do not edit.", "",
             "| dashboard | panel | query |", "|---|---|---|"]
    for board in BOARDS:
        name = board.title.split(" / ", 1)[-1]
        for row in board.rows:
            for panel in row.panels:
                for query in panel.queries:
                    expr = query.expr.replace("|", "\\|")
                    lines.append(f"| {name} | {panel.title} | `{expr}` |")
    return "\n".join(lines) + "\n"


def outputs() -> dict[Path, str]:
    files = {HERE / f"{board.uid}.json": render(board) for board in BOARDS}
    files[HERE / "PANELS.md"] = panels_table()
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a committed file differs from what this builds")
    args = parser.parse_args(argv)
    files = outputs()
    stale = sorted(str(p.name) for p, text in files.items()
                   if not p.exists() or p.read_text() != text)
    extra = sorted(p.name for p in HERE.glob("*.json") if p not in files)
    if args.check:
        for name in stale:
            print(f"build.py: {name} is out of date; run build.py", file=sys.stderr)
        for name in extra:
            print(f"build.py: {name} is not built by build.py", file=sys.stderr)
        return 1 if stale or extra else 0
    for path, text in files.items():
        path.write_text(text)
    print(f"build.py: wrote {len(files)} files ({len(stale)} changed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
