"""Streaming reader of MapReduce JobHistory files (``.jhist``, Avro JSON).

What an operator has is the JobHistoryServer's done directory
(``mapreduce.jobhistory.done-dir``): per job a ``<job id>-...jhist`` event
log and a ``<job id>_conf.xml``, in dated folders, many thousand of them.
:class:`JhistReader` walks directories and files given, reads one file at a
time line by line (a file is never held whole), and yields one
:class:`~yarn_advisor.classifiers.readers.records.TraceJob` per file, as the Rumen
reader does per trace job, so the evaluation treats both alike:

- identity: job name, user and queue (``JOB_SUBMITTED``; the leaf of the
  queue path in ``JOB_QUEUE_CHANGED``, where the RM placed the job: Hadoop 3
  writes ``root.etl`` for a job submitted to ``etl``);
  framework ``MAPREDUCE``; stage = the task type, ``MAP`` or ``REDUCE``;
- a task's ``start_ms`` is ``TASK_STARTED`` (when the AM scheduled it), its
  attempts' starts are their launches (``*_ATTEMPT_STARTED``), so
  ``launch_ms`` and ``duration_ms`` are those of Rumen's reader: from the
  first attempt's launch to the task's end (``TASK_FINISHED``/``TASK_FAILED``);
- status: ``SUCCESS``, or ``FAILED``/``KILLED`` from ``TASK_FAILED``; a task
  with no end event (job truncated) has ``finish_ms`` -1 and is not scored;
- memory and vcores asked per task type come from the job's ``_conf.xml``
  beside the ``.jhist`` when there is one (the history file does not record
  them), else -1 (unknown);
- tasks of an uberized job ran inside the AM's container, and a task that
  failed or was killed before any attempt started never had a container:
  neither ran in a container an advisor places, so they are kept in
  ``others`` (not evaluated; the Rumen reader would time the second kind
  from when it was scheduled to when it was killed) and counted.

Both encodings Hadoop writes are read: Avro JSON (Hadoop 2's default) and
Avro binary (Hadoop 3's, ``mapreduce.jobhistory.jhist.format=binary``;
decoded with the file's own schema by :mod:`~yarn_advisor.classifiers.readers.avro_binary`).

Tolerant: a garbled line, an event without a field it needs, an event type
absent from the file's own schema, a file ending before its job's end event
are counted in the :class:`~yarn_advisor.classifiers.readers.sources.ReadReport`
and skipped. Read on the Hadoop 0.23, 2.0, 2.4 and 2.6 files of the shared
data, and on Hadoop 3.4 files of the test cluster.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

from yarn_advisor.classifiers.readers.avro_binary import AvroStream, Decoder, compile_schema
from yarn_advisor.classifiers.readers.records import (
    FAILED,
    KILLED,
    MR_STAGES,
    SUCCESS,
    TraceAttempt,
    TraceJob,
    TraceTask,
)
from yarn_advisor.classifiers.readers.sources import (
    READ_ERRORS,
    ReadReport,
    damage_of,
    feed_lines,
    read_file,
    walk_files,
)

HISTORY_SUFFIXES = (".jhist", ".jhist.gz")
_JOB_ID = re.compile(r"job_\d+_\d+")
_CONF = re.compile(r"(job_\d+_\d+)(?:_\d+)?_conf\.xml$")
_TYPE_AT = len(b'{"type":"')
_GARBLED = "garbled"  # a binary file stopped at an undecodable event (reported as such)
_JOB_END = {"JOB_FINISHED", "JOB_FAILED", "JOB_KILLED", "JOB_ERROR"}
# Events read; every other event type the file's schema declares is skipped unparsed.
_USED = {
    "JOB_SUBMITTED", "JOB_QUEUE_CHANGED", "JOB_INITED", "TASK_STARTED", "TASK_FINISHED",
    "TASK_FAILED", *_JOB_END,
    *(f"{kind}_ATTEMPT_{what}" for kind in ("MAP", "REDUCE", "SETUP", "CLEANUP")
      for what in ("STARTED", "FINISHED", "FAILED", "KILLED")),
}  # fmt: skip
# The event fields read (and the Event record's own); a binary file's others are skipped.
_FIELDS = frozenset({
    "type", "event", "jobid", "jobName", "userName", "jobQueueName", "submitTime",
    "launchTime", "totalMaps", "totalReduces", "uberized", "jobStatus", "taskid", "taskType",
    "startTime", "finishTime", "status", "taskStatus", "attemptId", "trackerName", "hostname",
})
_CONF_KEYS = {
    "map_mb": ("mapreduce.map.memory.mb", "mapred.job.map.memory.mb"),
    "reduce_mb": ("mapreduce.reduce.memory.mb", "mapred.job.reduce.memory.mb"),
    "map_vcores": ("mapreduce.map.cpu.vcores",),
    "reduce_vcores": ("mapreduce.reduce.cpu.vcores",),
    "am_mb": ("yarn.app.mapreduce.am.resource.mb",),
}
_SLOWSTART = "mapreduce.job.reduce.slowstart.completedmaps"  # a share, not a count
_RESULTS = {"SUCCEEDED": SUCCESS, "SUCCESS": SUCCESS, "FAILED": FAILED, "KILLED": KILLED}


class JhistReader:
    """Iterate the jobs of the ``.jhist`` files in ``paths`` (directories are
    walked for ``*.jhist`` and ``*.jhist.gz``; files given are read whatever
    their name); :attr:`report` counts what was read and skipped."""

    def __init__(self, paths: Iterable[str | Path]) -> None:
        self.paths = [str(p) for p in paths]
        self.report = ReadReport("jhist")

    def __iter__(self) -> Iterator[TraceJob]:
        self.report = ReadReport("jhist")
        confs: dict[Path, dict[str, Path]] = {}
        for path in self._files():
            folder = path.parent
            if folder not in confs:
                confs.clear()  # one folder at a time: the walk visits each once
                confs[folder] = _confs_in(folder)
            job = read_jhist(path, self.report, confs[folder])
            if job is not None:
                yield job

    def _files(self) -> Iterator[Path]:
        for given in map(Path, self.paths):
            if given.is_dir():
                yield from (p for p in walk_files(given) if p.name.endswith(HISTORY_SUFFIXES))
            else:
                yield given


def _confs_in(folder: Path) -> dict[str, Path]:
    """``{job id: its _conf.xml}`` in ``folder`` (listed once per folder)."""
    try:
        names = [p.name for p in folder.iterdir()]
    except OSError:
        return {}
    found = {}
    for name in names:
        m = _CONF.match(name)
        if m:
            found[m.group(1)] = folder / name
    return found


@dataclass
class _Task:
    type: str = ""
    start_ms: int = -1
    finish_ms: int = -1
    status: str = ""
    attempts: dict[str, list[Any]] = field(default_factory=dict)  # id -> [host, start, end, result]


@dataclass
class _Job:
    job_id: str = ""
    name: str = ""
    user: str = ""
    queue: str = ""
    outcome: str = ""
    submit_ms: int = -1
    launch_ms: int = -1
    finish_ms: int = -1
    total_maps: int = -1
    total_reduces: int = -1
    uberized: bool = False
    ended: bool = False
    tasks: dict[str, _Task] = field(default_factory=dict)


def read_jhist(path: Path, report: ReadReport, confs: Mapping[str, Path] | None = None
               ) -> TraceJob | None:
    """One job from one ``.jhist`` file, or None if nothing of it is readable
    (counted in ``report``). ``confs`` maps job ids to their ``_conf.xml``."""
    job = read_file(path, report, lambda stream: _read_events(path, stream, report))
    if job is None:
        return None
    conf = (confs or {}).get(job.job_id)
    asked = _read_conf(conf, report) if conf is not None else {}
    built = _build(job, asked)
    report.jobs += 1
    report.tasks += len(built.maps) + len(built.reduces) + len(built.others)
    if job.uberized:
        report.ignore("uber_task", len(built.others))
    else:
        report.ignore("never_launched_task", sum(t.type in MR_STAGES for t in built.others))
    return built


def _read_events(path: Path, stream: IO[bytes], report: ReadReport) -> _Job | None:
    try:
        head = stream.readline().strip()
    except READ_ERRORS as exc:  # unopenable, corrupt, or cut inside its first block
        report.skip(damage_of(exc), path, f"{type(exc).__name__}: {exc}")
        return None
    if head not in (b"Avro-Json", b"Avro-Binary"):
        report.skip("unsupported_file", path, "not a JobHistory file (no Avro header)")
        return None
    job = _Job()
    schema_line = stream.readline()
    declared = _declared_types(schema_line)
    if head == b"Avro-Json":
        cut = feed_lines(path, stream, report,
                         lambda line: _event(line, declared, job, path, report))
    else:
        stopped = _binary_events(path, stream, schema_line, job, report)
        if stopped is None:
            return None
        cut = stopped
    if cut == _GARBLED:
        pass  # counted where it stopped
    elif job.ended and cut:
        report.skip("garbled_line", path, f"after the job's end: {cut}")
    elif not job.ended:
        why = cut or "ends before the job's end event"
        report.skip("truncated_file", path, f"{why} ({len(job.tasks)} task(s) read)")
    return job if job.tasks or job.job_id else None


def _binary_events(path: Path, stream: IO[bytes], schema_line: bytes, job: _Job,
                   report: ReadReport) -> str | None:
    """Apply the binary-encoded events of ``stream``; returns why reading
    stopped early (``""``: read to the end), None if the schema is unreadable."""
    try:
        decode = _binary_decoder(schema_line.strip())
    except (ValueError, KeyError, TypeError) as exc:
        report.skip("unsupported_file", path, f"binary job history with an unreadable "
                    f"schema: {exc}")
        return None
    source = AvroStream(stream)
    try:
        while not source.at_end():
            event = decode(source)
            kind, body = event["type"], event["event"]
            if kind in _USED and isinstance(body, dict):
                try:
                    _apply(kind, body, job)
                except (KeyError, TypeError, ValueError) as exc:
                    report.skip("missing_field", path, f"{kind} without a usable {exc}")
    except EOFError as exc:
        return str(exc)
    except READ_ERRORS as exc:
        return f"{type(exc).__name__}: {exc}"
    except (ValueError, IndexError, KeyError, TypeError, OverflowError) as exc:
        report.skip("garbled_record", path, f"binary event does not decode ({exc}); "
                    f"the rest of the file is not read")
        return _GARBLED
    return ""


@lru_cache(maxsize=8)
def _binary_decoder(schema_line: bytes) -> Decoder:
    """The event decoder of a schema (compiled once: a done directory's files
    share the few schemas of the Hadoop versions that wrote them)."""
    return compile_schema(json.loads(schema_line), keep=_FIELDS)


def _declared_types(schema_line: bytes) -> frozenset[str]:
    """The event types the file's own schema declares (its ``type`` enum)."""
    try:
        schema = json.loads(schema_line)
        for f in schema["fields"]:
            if f["name"] == "type":
                return frozenset(str(s) for s in f["type"]["symbols"])
    except (ValueError, KeyError, TypeError):
        pass
    return frozenset(_USED)


def _event(line: bytes, declared: frozenset[str], job: _Job, path: Path,
           report: ReadReport) -> bool:
    """Apply one event line to ``job``; False if the line is not valid JSON."""
    kind = ""
    line = line.lstrip()  # Hadoop 0.23-2.x write a space before each event
    if line.startswith(b'{"type":"'):  # cheap look at the type: most events are not used
        end = line.find(b'"', _TYPE_AT)
        kind = line[_TYPE_AT:end].decode("ascii", "replace") if end > 0 else ""
        if kind and kind not in _USED:
            if kind not in declared:
                report.ignore("unknown_event")
            return True
    try:
        obj = json.loads(line)
        kind = obj["type"]
        body = next(iter(obj["event"].values()))
        if not isinstance(body, dict):
            raise TypeError("event body is not a record")
    except (ValueError, KeyError, TypeError, StopIteration, AttributeError):
        return False
    if kind not in _USED:
        if kind not in declared:
            report.ignore("unknown_event")
        return True
    try:
        _apply(kind, body, job)
    except (KeyError, TypeError, ValueError) as exc:
        report.skip("missing_field", path, f"{kind} without a usable {exc}")
    return True


def _val(body: Mapping[str, Any], key: str) -> Any:
    """A field, with Avro's JSON union wrapping (``{"string": "x"}``) removed."""
    value = body[key]
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return value


def _ms(body: Mapping[str, Any], key: str) -> int:
    value = _val(body, key)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(key)
    return int(value)


def _opt_str(body: Mapping[str, Any], key: str) -> str:
    value = _val(body, key) if key in body else None
    return value if isinstance(value, str) else ""


def _apply(kind: str, body: Mapping[str, Any], job: _Job) -> None:
    if kind.endswith("_STARTED") and "_ATTEMPT_" in kind:
        task = _task(job, body, kind.split("_", 1)[0])
        task.attempts[str(_val(body, "attemptId"))] = [
            _opt_str(body, "trackerName"), _ms(body, "startTime"), -1, ""]
    elif "_ATTEMPT_" in kind:
        task = _task(job, body, kind.split("_", 1)[0])
        status = _opt_str(body, "taskStatus") or _opt_str(body, "status")
        if not status:
            raise KeyError("status")
        attempt = task.attempts.setdefault(str(_val(body, "attemptId")), ["", -1, -1, ""])
        attempt[0] = attempt[0] or _opt_str(body, "hostname")
        attempt[2], attempt[3] = _ms(body, "finishTime"), _RESULTS.get(status, status)
    elif kind == "TASK_STARTED":
        task = _task(job, body, str(_val(body, "taskType")))
        task.start_ms = _ms(body, "startTime")
    elif kind in ("TASK_FINISHED", "TASK_FAILED"):
        task = _task(job, body, "")
        status = _opt_str(body, "status") or ("SUCCEEDED" if kind == "TASK_FINISHED" else "")
        task.finish_ms, task.status = _ms(body, "finishTime"), _RESULTS.get(status, status)
    elif kind == "JOB_SUBMITTED":
        job.job_id = str(_val(body, "jobid"))
        job.name, job.user = _opt_str(body, "jobName"), _opt_str(body, "userName")
        job.queue = _opt_str(body, "jobQueueName") or job.queue
        job.submit_ms = _ms(body, "submitTime")
    elif kind == "JOB_QUEUE_CHANGED":  # where the RM placed it, as a path (root.etl)
        job.queue = _opt_str(body, "jobQueueName").rsplit(".", 1)[-1] or job.queue
    elif kind == "JOB_INITED":
        job.launch_ms = _ms(body, "launchTime")
        job.total_maps, job.total_reduces = _ms(body, "totalMaps"), _ms(body, "totalReduces")
        job.uberized = _val(body, "uberized") is True if "uberized" in body else False
    else:  # the job's end
        job.finish_ms, job.ended = _ms(body, "finishTime"), True
        job.outcome = SUCCESS if kind == "JOB_FINISHED" else _opt_str(body, "jobStatus") or (
            kind.removeprefix("JOB_"))


def _task(job: _Job, body: Mapping[str, Any], kind: str) -> _Task:
    task_id = str(_val(body, "taskid"))
    task = job.tasks.get(task_id)
    if task is None:
        task = job.tasks[task_id] = _Task()
    if not task.type:
        declared = _opt_str(body, "taskType")
        task.type = declared or {"MAP": "MAP", "REDUCE": "REDUCE"}.get(kind, kind)
    return task


def _read_conf(conf: Path, report: ReadReport) -> dict[str, float]:
    """The memory and vcores a job asked per task type (and its AM's memory and
    reduce slow start), from its ``_conf.xml`` (streamed: a job conf holds
    about a thousand properties)."""
    wanted = {key: name for name, keys in _CONF_KEYS.items() for key in keys}
    found: dict[str, float] = {}
    try:
        name = value = None
        for _, elem in ET.iterparse(conf):
            if elem.tag == "name":
                name = (elem.text or "").strip()
            elif elem.tag == "value":
                value = (elem.text or "").strip()
            elif elem.tag == "property":
                if name in wanted and value and value.lstrip("-").isdigit() and len(value) < 12:
                    found.setdefault(wanted[name], int(value))
                elif name == _SLOWSTART and value:
                    share = _share(value)
                    if share is not None:
                        found.setdefault("slowstart", share)
                name = value = None
                elem.clear()
    except (ET.ParseError, OSError) as exc:
        report.skip("unreadable_file", conf, f"job conf: {exc}")
    return found


def _share(value: str) -> float | None:
    """A share in [0, 1] as configured, or None."""
    try:
        share = float(value) if len(value) < 32 else math.nan
    except ValueError:
        return None
    return share if 0.0 <= share <= 1.0 else None


def _build(job: _Job, asked: Mapping[str, float]) -> TraceJob:
    if not job.job_id:  # JOB_SUBMITTED lost: the id is in every task id
        some = next(iter(job.tasks), "")
        m = re.search(r"_(\d+_\d+)_", some)
        job.job_id = f"job_{m.group(1)}" if m else ""
    groups: dict[str, list[TraceTask]] = {"MAP": [], "REDUCE": [], "": []}
    for task_id, t in job.tasks.items():
        attempts = tuple(
            TraceAttempt(a_id, host, start, end, result)
            for a_id, (host, start, end, result) in t.attempts.items()
        )
        vcores = int(asked.get("map_vcores" if t.type == "MAP" else "reduce_vcores", -1))
        task = TraceTask(task_id, t.type, t.status, t.start_ms, t.finish_ms, attempts,
                         vcores=vcores if t.type in MR_STAGES else -1)
        placed = t.type in MR_STAGES and not job.uberized and (attempts or t.status == SUCCESS
                                                              or not t.status)
        groups[t.type if placed else ""].append(task)
    return TraceJob(
        job_id=job.job_id, user=job.user, name=job.name, queue=job.queue, job_type="",
        outcome=job.outcome, submit_ms=job.submit_ms, launch_ms=job.launch_ms,
        finish_ms=job.finish_ms, total_maps=job.total_maps, total_reduces=job.total_reduces,
        map_mb=int(asked.get("map_mb", -1)), reduce_mb=int(asked.get("reduce_mb", -1)),
        heap_mb=-1, maps=tuple(groups["MAP"]), reduces=tuple(groups["REDUCE"]),
        others=tuple(groups[""]), am_mb=int(asked.get("am_mb", -1)),
        slowstart=asked.get("slowstart", -1.0),
    )
