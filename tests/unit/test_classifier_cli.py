"""``classify-eval`` subcommand: JSON shape, human report, exit status."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from yarn_advisor.classifiers.evaluation.cli import register

DATA = Path(__file__).resolve().parents[1] / "fixtures"  # vendored: see its PROVENANCE.md
TRACE = DATA / "hadoop-gridmix-system-traces" / "distcache_case4_trace.json.gz"


def main(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="yarn-advisor")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return int(args.handler(args))


def test_json_is_one_object_with_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main("classify-eval", "--rumen", str(TRACE), "--threshold", "60", "--json") == 0
    out = json.loads(capsys.readouterr().out)  # the whole stdout is one JSON object
    assert out["trace"] == str(TRACE) and out["threshold_s"] == 60.0
    for cls in ("short", "long"):
        assert set(out[cls]) == {"n", "recall"}
        assert out[cls]["n"] == sum(out["confusion"][cls].values())
        assert 0.0 <= out[cls]["recall"] <= 1.0
    # 200 + 17 tasks; 40 maps and 5 reduces ran 60 s or more (see the trace)
    assert (out["short"]["n"], out["long"]["n"]) == (172, 45)
    assert out["long_called_short"] == pytest.approx(
        out["confusion"]["long"]["short"] / 45, abs=1e-4
    )
    assert set(out["confusion"]["short"]) == {"short", "long"}
    assert out["first_seen"]["short"] <= out["cold_starts"]["short"]
    assert out["short"]["recall"] <= out["short_recall_ceiling"] <= 1.0
    oracle = out["job_stage_oracle"]
    assert oracle["short_recall"] <= out["short_recall_ceiling"] and oracle["share"] == 0.95
    assert out["renamed_to"] is None and out["repeated_jobs"] == 0 and "per_trace" not in out


def test_human_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main("classify-eval", "--rumen", str(TRACE), "--min-confidence", "0.95") == 0
    out = capsys.readouterr().out
    assert "actual / predicted" in out and "long tasks called short:" in out
    assert "min confidence 0.95" in out
    cold = next(line for line in out.splitlines() if line.startswith("cold starts"))
    assert "short recall without them" in cold
    first = next(line for line in out.splitlines() if line.startswith("first of their"))
    assert "short recall ceiling" in first
    assert any(line.startswith("job-stage oracle") for line in out.splitlines())
    assert out.splitlines()[4].split()[0] == "short" and out.splitlines()[5].split()[0] == "long"


def test_repeated_traces_learn_across(capsys: pytest.CaptureFixture[str]) -> None:
    # The same trace twice: its jobs are replayed once (a daemon never sees a
    # job twice), and each trace has its own figures.
    assert main("classify-eval", "--rumen", str(TRACE), "--rumen", str(TRACE), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["trace"] == [str(TRACE), str(TRACE)] and out["short"]["n"] == 172
    assert out["repeated_jobs"] == 2
    assert [(t["short"]["n"], t["repeated_jobs"]) for t in out["per_trace"]] == [(172, 0), (0, 2)]


def test_time_order_learns_the_earlier_trace_first(capsys: pytest.CaptureFixture[str]) -> None:
    early = DATA / "hadoop-gridmix-system-traces" / "distcache_case1_trace.json.gz"
    assert main("classify-eval", "--rumen", str(TRACE), "--rumen", str(early), "--time-order",
                "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["trace"] == [str(early), str(TRACE)]  # case1 was recorded two days before
    assert main("classify-eval", "--rumen", str(early), "--rumen", str(TRACE), "--json") == 0
    assert json.loads(capsys.readouterr().out)["confusion"] == out["confusion"]
    # the user's sorter maps of case1 make case4's first sorter maps short
    alone = out["per_trace"][1]
    assert main("classify-eval", "--rumen", str(TRACE), "--json") == 0
    assert alone["short"]["recall"] > json.loads(capsys.readouterr().out)["short"]["recall"]


def test_rename_jobs_gives_every_job_one_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main("classify-eval", "--rumen", str(TRACE), "--rename-jobs", "--json") == 0
    renamed = json.loads(capsys.readouterr().out)
    assert renamed["renamed_to"] == "job"
    assert main("classify-eval", "--rumen", str(TRACE), "--rename-jobs", "x", "--json") == 0
    assert json.loads(capsys.readouterr().out)["confusion"] == renamed["confusion"]
    assert main("classify-eval", "--rumen", str(TRACE), "--json") == 0
    original = json.loads(capsys.readouterr().out)
    assert (renamed["short"]["n"], renamed["long"]["n"]) == (original["short"]["n"], 45)
    # the two jobs (sorter, then Pipe) of one user now share their name: only
    # their shapes (12 and 5 reduces) keep Pipe's half-long maps apart
    assert renamed["confusion"]["long"]["short"] <= 2


def test_set_passes_model_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main("classify-eval", "--rumen", str(TRACE), "--rename-jobs", "--json",
                "--set", "shape_correlation=0") == 0
    loose = json.loads(capsys.readouterr().out)
    assert main("classify-eval", "--rumen", str(TRACE), "--rename-jobs", "--json") == 0
    default = json.loads(capsys.readouterr().out)
    # no discount of a shape: Pipe's first maps are called short from sorter's
    assert loose["confusion"]["long"]["short"] > default["confusion"]["long"]["short"]
    assert main("classify-eval", "--rumen", str(TRACE), "--json",
                "--set", "reduces_correlation=0.3") == 0
    capsys.readouterr()
    for bad in ("shape_correlation=2", "reduces_correlation=2", "nope=1", "alpha=x",
                "long_while_maps_wait=yes", "alpha"):
        assert main("classify-eval", "--rumen", str(TRACE), "--set", bad) == 2
        assert "--set" in capsys.readouterr().err


def test_not_a_trace_exits_1_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    topology = DATA / "hadoop-rumen-testdata/zombie/input-topology.json"
    assert main("classify-eval", "--rumen", str(topology), "--json") == 1
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["short"] == {"n": 0, "recall": None} and out["problems"]
    assert "not a Rumen job" in captured.err


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main("classify-eval", "--rumen", str(TRACE), "--threshold", "0") == 2
    assert main("classify-eval", "--rumen", str(TRACE), "--min-confidence", "2") == 2
    assert main("classify-eval", "--rumen", str(TRACE), "--min-support", "0") == 2


def test_min_support_trades_short_recall(capsys: pytest.CaptureFixture[str]) -> None:
    runs = {}
    for support in ("1", "3", "10"):
        assert main("classify-eval", "--rumen", str(TRACE), "--min-support", support,
                    "--json") == 0
        runs[support] = json.loads(capsys.readouterr().out)
        assert runs[support]["min_support"] == int(support)
    recall = [runs[s]["short"]["recall"] for s in ("1", "3", "10")]
    assert recall[0] >= recall[1] >= recall[2] and recall[0] > recall[2]
