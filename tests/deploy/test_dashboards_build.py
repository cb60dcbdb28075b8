"""The committed dashboards are exactly what build.py makes from panels.py."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import CHART

BUILD = CHART / "dashboards" / "build.py"


def test_committed_dashboards_equal_the_generated_ones() -> None:
    done = subprocess.run([sys.executable, str(BUILD), "--check"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def test_every_panel_queries_the_chosen_advisor_through_the_datasource_variable() -> None:
    for path in sorted((CHART / "dashboards").glob("*.json")):
        board = json.loads(path.read_text())
        names = [v["name"] for v in board["templating"]["list"]]
        assert names[:3] == ["datasource", "job", "instance"], path.name
        for panel in board["panels"]:
            if panel["type"] == "row":
                continue
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
            assert panel["targets"], f"{path.name}: {panel['title']} has no query"
            for target in panel["targets"]:
                assert 'job="$job", instance=~"$instance"' in target["expr"], target["expr"]

