"""Independent counts of the real files, for the readers' tests.

Deliberately simple and sharing no code with the readers: regular
expressions over the raw ``.jhist`` text, a plain pass over a Spark log's
``SparkListenerTaskEnd`` lines, Spark's own ``Number of Tasks``; and the
Spark codecs' own Java libraries to compress a log as Spark does.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

_TASK_END = re.compile(
    rb'"type":"TASK_(?:FINISHED|FAILED)".*?"taskid":"(task_\w+)".*?"finishTime":(\d+)'
    rb'.*?"status":"(\w+)"')
_ATTEMPT_START = re.compile(
    rb'"type":"(?:MAP|REDUCE)_ATTEMPT_STARTED".*?"taskid":"(task_\w+)".*?"startTime":(\d+)')
_TASK_START = re.compile(rb'"type":"TASK_STARTED".*?"taskid":"(task_\w+)"')


@dataclass(frozen=True)
class Expected:
    """One task as the simple count sees it: first attempt launch (None if no
    attempt started), end, and final status as written in the file."""

    launch_ms: int | None
    finish_ms: int | None
    status: str | None


def count_jhist(path: Path) -> dict[str, Expected]:
    """Tasks of a ``.jhist`` by regular expressions over its raw lines."""
    starts: dict[str, int] = {}
    ends: dict[str, tuple[int, str]] = {}
    seen: set[str] = set()
    for line in path.read_bytes().splitlines():
        if m := _TASK_START.search(line):
            seen.add(m.group(1).decode())
        elif m := _ATTEMPT_START.search(line):
            task = m.group(1).decode()
            starts[task] = min(int(m.group(2)), starts.get(task, 1 << 62))
        elif m := _TASK_END.search(line):
            ends[m.group(1).decode()] = (int(m.group(2)), m.group(3).decode())
    return {
        t: Expected(starts.get(t), ends[t][0] if t in ends else None,
                    ends[t][1] if t in ends else None)
        for t in seen | set(ends) | set(starts)
    }


def count_spark(path: Path) -> dict[tuple[int, int, int], Expected]:
    """Tasks of a Spark log, one per (stage, stage attempt, partition), from
    its TaskEnd lines only: first launch, end of the successful attempt."""
    attempts: dict[tuple[int, int, int], list[tuple[int, int, str]]] = {}
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event["Event"] != "SparkListenerTaskEnd":
            continue
        info, reason = event["Task Info"], event["Task End Reason"]["Reason"]
        key = (event["Stage ID"], event["Stage Attempt ID"], info["Index"])
        attempts.setdefault(key, []).append((info["Launch Time"], info["Finish Time"], reason))
    out = {}
    for key, runs in attempts.items():
        won = [end for _, end, why in runs if why == "Success"]
        out[key] = Expected(min(start for start, _, _ in runs),
                            won[0] if won else max(end for _, end, _ in runs),
                            "Success" if won else runs[-1][2])
    return out


def stage_sizes(path: Path) -> dict[tuple[int, int], int]:
    """Spark's own count: ``Number of Tasks`` of each completed stage attempt."""
    sizes = {}
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event["Event"] == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            if "Failure Reason" not in info:
                sizes[(info["Stage ID"], info["Stage Attempt ID"])] = info["Number of Tasks"]
    return sizes


def spark_compress(jars: str, log: Path, out: Path) -> tuple[Path, Path]:
    """``log`` compressed by lz4-java and snappy-java as Spark writes event logs."""
    lz4, snappy = out / f"{log.name}.lz4", out / f"{log.name}.snappy"
    source = Path(__file__).with_name("SparkCodecs.java")
    subprocess.run(["java", "-cp", jars, str(source), str(log), str(lz4), str(snappy)],
                   check=True, timeout=120, capture_output=True)
    return lz4, snappy
