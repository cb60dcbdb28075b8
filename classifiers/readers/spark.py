"""Streaming reader of Spark event logs (``spark.eventLog.dir``).

One event log is one application attempt: a file of JSON lines
(``application_..``, ``app-..``, ``local-..``; ``.inprogress`` while it runs),
or, with ``spark.eventLog.rolling.enabled``, a folder ``eventlog_v2_<app>``
of ``events_<n>_<app>`` files read in order of ``n``. :class:`SparkEventLogReader`
reads line by line and yields one
:class:`~yarn_advisor.classifiers.readers.records.TraceJob` per application, its
tasks in ``stage_tasks``, framework ``SPARK``:

- identity: the application name (``spark.app.name``), its user and queue
  (``spark.yarn.queue``); ``total_maps``/``total_reduces`` are -1, so the
  evaluation's job-progress feature is unknown (``?``) for Spark;
- stage: the stage *name*, Spark's short call site (``count at
  Foo.scala:122``), which is what stays the same from run to run of the
  same code; the numeric stage id is a counter within one application and
  is not used (``STAGE<id>`` only when the name was never logged);
- a task is one partition of one stage attempt, ``(stage id, stage attempt,
  partition index)``; its attempts are Spark's task attempts (retries,
  speculative copies), each timed by ``Task Info``'s ``Launch Time`` and
  ``Finish Time``; the task runs from its first launch to the end of its
  successful attempt (else of its last one), status ``SUCCESS``, ``FAILED``
  or ``KILLED`` as the evaluation expects (a ``Resubmitted`` end re-reports a
  finished task whose output was lost: not a new attempt, ignored);
- demand: the container an executor asked YARN for, in MiB: the executor
  memory plus its overhead (``spark.executor.memoryOverhead``, else
  ``max(384, spark.executor.memoryOverheadFactor (0.10) x memory)``, as
  Spark on YARN computes it) plus off-heap and PySpark memory when set;
  taken from the stage's resource profile (``SparkListenerResourceProfileAdded``,
  Spark 3.1+; what it omits, from the default profile 0) when one gives the
  memory, else from ``spark.executor.*`` in the environment (Spark's default
  ``1g`` when the environment was logged without it). vcores: the profile's
  or ``spark.executor.cores``, else the executors' ``Total Cores``. Unknown: -1.

Tolerant as the other readers (see :mod:`~yarn_advisor.classifiers.readers.sources`).
Compressed logs: Spark's ``lz4`` and ``snappy`` codecs (decoded in pure
Python, checked against logs compressed by lz4-java and snappy-java as Spark
writes them), and gzip, bzip2, xz are read; ``zstd`` (Spark's event-log
default in recent versions) and ``lzf`` need libraries this package does not
depend on, and are reported ``unsupported_file``, codec named. Rolling logs whose old files
were compacted (``.compact``) have lost the task events of finished jobs:
their applications come out with fewer tasks.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from yarn_advisor.classifiers.readers.records import (
    FAILED,
    KILLED,
    SUCCESS,
    TraceAttempt,
    TraceJob,
    TraceTask,
)
from yarn_advisor.classifiers.readers.sources import (
    FormatReader,
    ReadReport,
    feed_lines,
    read_file,
)

FRAMEWORK = "SPARK"
ROLLING_PREFIX = "eventlog_v2_"
MAX_STAGE_NAME = 80
_EVENT_AT = len(b'{"Event":"')
_ROLLED = re.compile(r"events_(\d+)_")
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)i?b?\s*", re.IGNORECASE)
_SIZE_MB = {"": 1.0, "k": 1 / 1024, "m": 1.0, "g": 1024.0, "t": 1024.0**2, "p": 1024.0**3}
_USED = {
    "SparkListenerApplicationStart", "SparkListenerApplicationEnd",
    "SparkListenerEnvironmentUpdate", "SparkListenerResourceProfileAdded",
    "SparkListenerExecutorAdded", "SparkListenerJobStart", "SparkListenerStageSubmitted",
    "SparkListenerStageCompleted", "SparkListenerTaskStart", "SparkListenerTaskEnd",
}
_KNOWN = {  # Spark's other listener events: not needed here, not "unknown"
    "SparkListenerLogStart", "SparkListenerJobEnd", "SparkListenerTaskGettingResult",
    "SparkListenerBlockManagerAdded", "SparkListenerBlockManagerRemoved",
    "SparkListenerUnpersistRDD", "SparkListenerExecutorRemoved", "SparkListenerBlockUpdated",
    "SparkListenerExecutorMetricsUpdate", "SparkListenerStageExecutorMetrics",
    "SparkListenerSpeculativeTaskSubmitted", "SparkListenerUnschedulableTaskSetAdded",
    "SparkListenerUnschedulableTaskSetRemoved", "SparkListenerMiscellaneousProcessAdded",
    "SparkListenerExecutorDecommissioned",
    *(f"SparkListener{who}{what}{where}" for who in ("Executor", "Node")
      for what in ("Blacklisted", "Unblacklisted", "Excluded", "Unexcluded")
      for where in ("", "ForStage")),
}  # fmt: skip
_KNOWN_PACKAGES = ("org.apache.spark.sql.", "org.apache.spark.streaming.")
_ENV_KEYS = (
    "spark.app.name", "spark.yarn.queue", "spark.executor.memory", "spark.executor.cores",
    "spark.executor.memoryOverhead", "spark.yarn.executor.memoryOverhead",
    "spark.executor.memoryOverheadFactor", "spark.memory.offHeap.enabled",
    "spark.memory.offHeap.size", "spark.executor.pyspark.memory",
)  # fmt: skip
_DEFAULT_EXECUTOR_MB = 1024  # spark.executor.memory's default, 1g


@dataclass(frozen=True)
class EventLog:
    """One application attempt's log: its files in order."""

    name: str
    files: tuple[Path, ...]
    in_progress: bool


class SparkEventLogReader(FormatReader):
    """Iterate the applications of the event logs in ``paths``: log files,
    rolling log folders (``eventlog_v2_*``), or folders of them (walked);
    :attr:`report` counts what was read and skipped."""

    READER = "spark"
    COUNTS = False  # read_event_log counts each application

    def read(self, report: ReadReport) -> Iterator[TraceJob]:
        for log in event_logs(Path(p) for p in self.paths):
            job = read_event_log(log, report)
            if job is not None:
                yield job


def event_logs(paths: Iterable[Path]) -> Iterator[EventLog]:
    """The event logs in ``paths``, in name order within each folder."""
    for path in paths:
        if path.is_dir() and path.name.startswith(ROLLING_PREFIX):
            yield _rolling(path)
        elif path.is_dir():
            entries = sorted(p for p in path.iterdir() if not p.name.startswith("."))
            yield from event_logs(p for p in entries if not p.name.endswith(".crc"))
        else:
            yield EventLog(path.name, (path,), path.name.endswith(".inprogress"))


def _rolling(folder: Path) -> EventLog:
    parts = []
    for p in folder.iterdir():
        m = _ROLLED.match(p.name)
        if m and not p.name.endswith(".crc"):
            parts.append((int(m.group(1)), p))
    done = any(p.name.startswith("appstatus_") and not p.name.endswith(".inprogress")
               for p in folder.iterdir())
    return EventLog(folder.name, tuple(p for _, p in sorted(parts)), not done)


@dataclass
class _Task:
    stage_id: int
    # attempt id -> [host, launch, end, result]
    attempts: dict[int, list[Any]] = field(default_factory=dict)


@dataclass
class _App:
    app_id: str = ""
    name: str = ""
    user: str = ""
    start_ms: int = -1
    end_ms: int = -1
    ended: bool = False
    env: dict[str, str] | None = None
    profiles: dict[int, Mapping[str, Any]] = field(default_factory=dict)
    stage_names: dict[int, str] = field(default_factory=dict)
    stage_profiles: dict[int, int] = field(default_factory=dict)
    executor_cores: Counter[int] = field(default_factory=Counter)
    tasks: dict[tuple[int, int, int], _Task] = field(default_factory=dict)
    events: int = 0


def read_event_log(log: EventLog, report: ReadReport) -> TraceJob | None:
    """One application from one event log, or None if nothing of it is
    readable (counted in ``report``)."""
    app = _App()
    whole = True
    for path in log.files:
        whole = _read_file(path, app, report)
        if not whole:
            break
    if not app.events:
        return None
    if not app.ended and whole:
        if log.in_progress:
            report.ignore("in_progress_log")
        else:
            report.skip("truncated_file", log.files[-1] if log.files else log.name,
                        f"ends before the application's end ({len(app.tasks)} task(s) read)")
    job = _build(app, log.name)
    report.jobs += 1
    report.tasks += len(job.stage_tasks)
    return job


def _read_file(path: Path, app: _App, report: ReadReport) -> bool:
    """Feed one file's events into ``app``; False if it could not be read
    whole (already counted): the log's later files are not read."""
    cut = read_file(path, report, lambda stream: _read_lines(path, stream, app, report),
                    unsupported="{codec} compression (a Spark codec) is not read")
    if cut is None:
        return False
    if cut and app.ended:
        report.skip("garbled_line", path, f"after the application's end: {cut}")
    elif cut:
        report.skip("truncated_file", path, f"{cut} ({len(app.tasks)} task(s) read)")
        return False
    return True


def _read_lines(path: Path, stream: IO[bytes], app: _App, report: ReadReport) -> str | None:
    """Feed ``stream``'s events into ``app``; why it was cut (``""``: read to
    its end), None if it is not an event log (counted)."""
    head = stream.readline()
    if not _event(head, app, path, report):
        report.skip("unsupported_file", path, "not a Spark event log (its first "
                    "line is not an event)")
        return None
    cut = "" if head.endswith(b"\n") else "last line cut short"
    return cut or feed_lines(path, stream, report, lambda line: _event(line, app, path, report))


def _event(line: bytes, app: _App, path: Path, report: ReadReport) -> bool:
    if line.startswith(b'{"Event":"'):  # cheap look: most lines are not used
        end = line.find(b'"', _EVENT_AT)
        name = line[_EVENT_AT:end].decode("ascii", "replace") if end > 0 else ""
        if name and name not in _USED:
            app.events += 1
            _count_unused(name, report)
            return True
    try:
        obj = json.loads(line)
        name = obj["Event"]
        if not isinstance(name, str):
            raise TypeError("Event")
    except (ValueError, KeyError, TypeError):
        return False
    app.events += 1
    if name not in _USED:
        _count_unused(name, report)
        return True
    try:
        _apply(name, obj, app)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        report.skip("missing_field", path, f"{name} without a usable {exc}")
    return True


def _count_unused(name: str, report: ReadReport) -> None:
    short = name.rsplit(".", 1)[-1]
    if short not in _KNOWN and not name.startswith(_KNOWN_PACKAGES):
        report.ignore("unknown_event")


def _apply(name: str, obj: Mapping[str, Any], app: _App) -> None:
    if name in ("SparkListenerTaskEnd", "SparkListenerTaskStart"):
        _task_event(name, obj, app)
    elif name in ("SparkListenerStageSubmitted", "SparkListenerStageCompleted"):
        _stage(obj["Stage Info"], app)
    elif name == "SparkListenerJobStart":
        for info in obj.get("Stage Infos") or ():
            _stage(info, app)
    elif name == "SparkListenerApplicationStart":
        app.name, app.user = str(obj.get("App Name") or ""), str(obj.get("User") or "")
        attempt = obj.get("App Attempt ID")
        app.app_id = str(obj.get("App ID") or "") + (f"_{attempt}" if attempt else "")
        app.start_ms = int(obj["Timestamp"])
    elif name == "SparkListenerApplicationEnd":
        app.end_ms, app.ended = int(obj["Timestamp"]), True
    elif name == "SparkListenerEnvironmentUpdate":
        props = obj["Spark Properties"]
        pairs = props.items() if isinstance(props, dict) else props  # old logs: [[k, v], ...]
        app.env = {str(k): str(v) for k, v in pairs if k in _ENV_KEYS}
    elif name == "SparkListenerResourceProfileAdded":
        asked = obj["Executor Resource Requests"]
        app.profiles[int(obj["Resource Profile Id"])] = {
            str(k): v["Amount"] for k, v in asked.items() if isinstance(v, dict)}
    elif name == "SparkListenerExecutorAdded":
        app.executor_cores[int(obj["Executor Info"]["Total Cores"])] += 1


def _stage(info: Mapping[str, Any], app: _App) -> None:
    stage = int(info["Stage ID"])
    stage_name = str(info.get("Stage Name") or "").strip()
    if stage_name:
        app.stage_names[stage] = stage_name[:MAX_STAGE_NAME]
    if "Resource Profile Id" in info:
        app.stage_profiles[stage] = int(info["Resource Profile Id"])


def _task_event(name: str, obj: Mapping[str, Any], app: _App) -> None:
    info = obj["Task Info"]
    stage, index = int(obj["Stage ID"]), int(info["Index"])
    key = (stage, int(obj.get("Stage Attempt ID") or 0), index)
    task = app.tasks.get(key)
    if task is None:
        task = app.tasks[key] = _Task(stage)
    attempt_id = int(info["Task ID"])
    attempt = task.attempts.setdefault(
        attempt_id, [str(info.get("Host") or ""), int(info["Launch Time"]), -1, ""])
    if name == "SparkListenerTaskStart":
        return
    reason = obj.get("Task End Reason") or {}
    why = reason.get("Reason") if isinstance(reason, dict) else None
    if why == "Resubmitted":  # a finished task's output lost: re-reported, not re-run
        return
    finish = int(info["Finish Time"])
    if finish <= 0:
        raise ValueError("Finish Time")
    killed = why == "TaskKilled" or info.get("Killed") is True
    success = why == "Success" or (why is None and info.get("Failed") is False and not killed)
    attempt[2], attempt[3] = finish, SUCCESS if success else KILLED if killed else FAILED


def size_mb(value: str | None, default_unit: str = "m") -> int:
    """A Spark size (``2g``, ``4096m``, ``512``: MiB without a unit) in MiB; -1 if unreadable."""
    m = _SIZE.fullmatch(value or "")
    if not m:
        return -1
    unit = (m.group(2) or default_unit).lower()
    return int(float(m.group(1)) * _SIZE_MB[unit])


def _env_container(env: Mapping[str, str]) -> tuple[int, int]:
    heap = size_mb(env.get("spark.executor.memory")) if "spark.executor.memory" in env \
        else _DEFAULT_EXECUTOR_MB
    overhead = size_mb(env.get("spark.executor.memoryOverhead")
                       or env.get("spark.yarn.executor.memoryOverhead"))
    off_heap = -1
    if env.get("spark.memory.offHeap.enabled", "").lower() == "true":
        off_heap = size_mb(env.get("spark.memory.offHeap.size"), default_unit="")
        off_heap = off_heap // (1024 * 1024) if off_heap > 0 else -1  # given in bytes
    pyspark = size_mb(env.get("spark.executor.pyspark.memory"))
    factor = env.get("spark.executor.memoryOverheadFactor", "0.10")
    cores = env.get("spark.executor.cores", "")
    memory = _container_mb(heap, overhead, off_heap, pyspark, _float(factor, 0.10))
    return memory, int(cores) if cores.isdigit() else -1


def _container_mb(heap: int, overhead: int, off_heap: int, pyspark: int, factor: float) -> int:
    """What Spark on YARN asks per executor container (YarnAllocator)."""
    if heap <= 0:
        return -1
    overhead = overhead if overhead > 0 else max(384, int(factor * heap))
    return heap + overhead + max(off_heap, 0) + max(pyspark, 0)


def _float(text: str, default: float) -> float:
    try:
        return float(text)
    except ValueError:
        return default


def _demand(app: _App, stage: int) -> tuple[int, int]:
    """(container MiB, vcores) of the executors of ``stage``; -1 where unknown."""
    env_mb, env_cores = _env_container(app.env) if app.env is not None else (-1, -1)
    profile = dict(app.profiles.get(0, {}))  # the default profile fills what a stage's omits
    profile.update(app.profiles.get(app.stage_profiles.get(stage, 0), {}))
    memory, cores = env_mb, env_cores
    if _num(profile.get("memory")) > 0:
        memory = _container_mb(_num(profile["memory"]), _num(profile.get("memoryOverhead")),
                               _num(profile.get("offHeap")), _num(profile.get("pyspark.memory")),
                               _float((app.env or {}).get(
                                   "spark.executor.memoryOverheadFactor", "0.10"), 0.10))
    if _num(profile.get("cores")) > 0:
        cores = _num(profile["cores"])
    if cores <= 0 and app.executor_cores:
        cores = app.executor_cores.most_common(1)[0][0]
    return memory, cores


def _num(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else -1


def _build(app: _App, log_name: str) -> TraceJob:
    tasks = []
    demands: dict[int, tuple[int, int]] = {}
    for (stage, stage_attempt, index), t in app.tasks.items():
        attempts = tuple(
            TraceAttempt(str(a_id), host, launch, end, result)
            for a_id, (host, launch, end, result) in sorted(
                t.attempts.items(), key=lambda kv: kv[1][1])
        )
        won = [a for a in attempts if a.result == SUCCESS]
        ended = [a for a in attempts if a.result]
        if won:
            status, finish = SUCCESS, won[0].finish_ms
        elif ended and len(ended) == len(attempts):
            last = max(ended, key=lambda a: a.finish_ms)
            status, finish = last.result, last.finish_ms
        else:
            status, finish = "", -1  # an attempt still running when the log ends
        if stage not in demands:
            demands[stage] = _demand(app, stage)
        memory, cores = demands[stage]
        task_id = f"stage_{stage}.{stage_attempt}_task_{index}"
        stage_name = app.stage_names.get(stage, f"STAGE{stage}")
        tasks.append(TraceTask(task_id, stage_name, status, attempts[0].start_ms, finish,
                               attempts, memory_mb=memory, vcores=cores))
    env = app.env or {}
    return TraceJob(
        job_id=app.app_id or log_name, user=app.user,
        name=app.name or env.get("spark.app.name", ""), queue=env.get("spark.yarn.queue", ""),
        job_type="", outcome="", submit_ms=app.start_ms, launch_ms=app.start_ms,
        finish_ms=app.end_ms, total_maps=-1, total_reduces=-1, map_mb=-1, reduce_mb=-1,
        heap_mb=-1, maps=(), reduces=(), framework=FRAMEWORK, stage_tasks=tuple(tasks),
    )  # fmt: skip
