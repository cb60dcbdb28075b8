"""``classify-eval`` end to end with each reader: JSON shape, reader counts, exit status."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from yarn_advisor.classifiers.evaluation.cli import register
from yarn_advisor.classifiers.readers.tasks_csv import COLUMNS

RUMEN_KEYS = {"trace", "threshold_s", "min_confidence", "min_support", "cycle_s", "short",
              "long", "confusion", "long_called_short", "cold_starts", "warm", "first_seen",
              "short_recall_ceiling", "short_called_long_by", "called_short_by", "skipped_tasks",
              "unresolved_tasks", "censored_tasks", "problems", "renamed_to", "job_stage_oracle",
              "baselines",
              "repeated_jobs"}


def main(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="yarn-advisor")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return int(args.handler(args))


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    code = main("classify-eval", *argv, "--json")
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def check_shape(out: dict, reader: str) -> None:
    assert set(out) == RUMEN_KEYS | {"read"}
    assert out["read"]["reader"] == reader
    for cls in ("short", "long"):
        assert set(out[cls]) == {"n", "recall"}
        assert out[cls]["n"] == sum(out["confusion"][cls].values())


def test_jhist(capsys: pytest.CaptureFixture[str], fixture_data: Path) -> None:
    code, out, _ = run_json(capsys, "--jhist", str(fixture_data / "hadoop-jhist"))
    check_shape(out, "jhist")
    assert code == 0 and out["problems"] == []
    # 24 tasks: 5 never launched (aside), 5 failed or killed short (unscored), 14 short
    assert out["read"] | {"skipped": None} == {"reader": "jhist", "files": 6, "jobs": 6,
                                                "tasks": 24, "skipped": None,
                                                "ignored": {"never_launched_task": 5}}
    assert (out["short"]["n"], out["long"]["n"], out["unresolved_tasks"]) == (14, 0, 5)


def test_spark_events(capsys: pytest.CaptureFixture[str], fixture_data: Path) -> None:
    logs = fixture_data / "spark-eventlogs"
    code, out, _ = run_json(capsys, "--spark-events", *map(str, sorted(logs.iterdir())))
    check_shape(out, "spark")
    assert code == 0 and out["read"]["tasks"] == 36
    # one task ran 63.8 s (a straggler with a speculative copy), 35 under 60 s
    assert (out["short"]["n"], out["long"]["n"]) == (35, 1)
    code, with_threshold, _ = run_json(capsys, "--spark-events", str(logs), "--threshold", "10")
    # at 10 s, also the 6 tasks of LargeBlocks (14 s to 30 s)
    assert (with_threshold["short"]["n"], with_threshold["long"]["n"]) == (29, 7)


def test_tasks_csv(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "tasks.csv"
    rows = [",".join(COLUMNS)] + [
        f"job_{j},nightly,alice,etl,MAP,{1700000000000 + 100_000 * j + i},"
        f"{1700000000000 + 100_000 * j + i + (90_000 if (i, j) == (0, 5) else 5_000)},1024,1,"
        "SUCCEEDED"
        for j in range(6) for i in range(4)
    ]
    path.write_text("\n".join(rows) + "\n")
    code, out, _ = run_json(capsys, "--tasks", str(path))
    check_shape(out, "tasks-csv")
    assert code == 0 and (out["short"]["n"], out["long"]["n"]) == (23, 1)
    assert out["short"]["recall"] > 0  # the recurring application is learned short
    assert out["cold_starts"]["short"] < 23


def test_damage_is_reported_and_exits_1(capsys: pytest.CaptureFixture[str], fixture_data: Path,
                                        tmp_path: Path) -> None:
    for path in (fixture_data / "hadoop-jhist").iterdir():
        shutil.copy(path, tmp_path / path.name)
    victim = sorted(tmp_path.iterdir())[1]
    victim.write_bytes(victim.read_bytes()[:-700])
    code, out, err = run_json(capsys, "--jhist", str(tmp_path))
    assert code == 1 and out["read"]["skipped"] == {"truncated_file": 1}
    assert out["problems"] and victim.name in out["problems"][0] and victim.name in err
    assert out["short"]["n"] > 0  # the figures of what was read


def test_human_report_names_what_was_read(capsys: pytest.CaptureFixture[str],
                                          fixture_data: Path) -> None:
    assert main("classify-eval", "--jhist", str(fixture_data / "hadoop-jhist")) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "read (jhist): 6 file(s), 6 job(s), 24 task(s); ignored: never_launched_task 5"


def test_missing_csv_column_exits_2_naming_it(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    path = tmp_path / "tasks.csv"
    path.write_text(",".join(c for c in COLUMNS if c != "memory_mb") + "\n")
    assert main("classify-eval", "--tasks", str(path), "--json") == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "missing required column(s) memory_mb" in captured.err


def test_one_source_exactly(capsys: pytest.CaptureFixture[str], fixture_data: Path) -> None:
    with pytest.raises(SystemExit) as both:
        main("classify-eval", "--jhist", str(fixture_data / "hadoop-jhist"),
             "--spark-events", str(fixture_data / "spark-eventlogs"))
    with pytest.raises(SystemExit) as none:
        main("classify-eval", "--json")
    assert both.value.code == none.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_rename_jobs_with_every_reader(capsys: pytest.CaptureFixture[str],
                                       fixture_data: Path) -> None:
    for source in (["--jhist", str(fixture_data / "hadoop-jhist")],
                   ["--spark-events", str(fixture_data / "spark-eventlogs")]):
        _, plain, _ = run_json(capsys, *source)
        code, renamed, _ = run_json(capsys, *source, "--rename-jobs", "anon")
        assert code == 0 and renamed["renamed_to"] == "anon" and plain["renamed_to"] is None
        assert (renamed["short"]["n"], renamed["long"]["n"]) == (
            plain["short"]["n"], plain["long"]["n"])
