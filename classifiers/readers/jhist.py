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

The JSON body is read as Hadoop's ``EventReader`` reads it (Avro's JSON
decoder over the rest of the stream after the version and schema lines):
blank lines, CR LF or CR line ends, an event across lines or several on one
line are all read (``tests/readers`` checks each layout against Hadoop's own
reading of it).

Tolerant: a garbled line, an event without a field it needs, an event type
absent from the file's own schema, a file ending before its job's end event
are counted in the :class:`~yarn_advisor.classifiers.readers.sources.ReadReport`
and skipped. Read on the Hadoop 0.23, 2.0, 2.4 and 2.6 files of the shared
data, and on Hadoop 3.4 files of the test cluster.
"""

from __future__ import annotations

import io
import json
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
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
    FormatReader,
    ReadReport,
    damage_of,
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


class JhistReader(FormatReader):
    """Iterate the jobs of the ``.jhist`` files in ``paths`` (directories are
    walked for ``*.jhist`` and ``*.jhist.gz``; files given are read whatever
    their name); :attr:`report` counts what was read and skipped."""

    READER = "jhist"
    COUNTS = False  # read_jhist counts each job

    def read(self, report: ReadReport) -> Iterator[TraceJob]:
        confs: dict[Path, dict[str, Path]] = {}
        for path in self._files():
            folder = path.parent
            if folder not in confs:
                confs.clear()  # one folder at a time: the walk visits each once
                confs[folder] = _confs_in(folder)
            job = read_jhist(path, report, confs[folder])
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
        # the version and schema lines as EventReader reads them (readLine)
        head, rest = _java_line(stream.readline())
        schema_line, rest = _java_line(rest or stream.readline())
    except READ_ERRORS as exc:  # unopenable, corrupt, or cut inside its first block
        report.skip(damage_of(exc), path, f"{type(exc).__name__}: {exc}")
        return None
    if head not in (b"Avro-Json", b"Avro-Binary"):
        report.skip("unsupported_file", path, "not a JobHistory file (no Avro header)")
        return None
    job = _Job()
    declared = _declared_types(schema_line)
    if head == b"Avro-Json":
        cut = _json_events(path, chain([rest] if rest else [], stream), report,
                           lambda obj: _event(obj, declared, job, path, report),
                           lambda line: _skipped_fast(line, declared, report))
    else:
        stopped = _binary_events(path, io.BufferedReader(_Prefixed(rest, stream)), schema_line,
                                 job, report)
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


def _java_line(data: bytes) -> tuple[bytes, bytes]:
    """The first line of ``data`` as Java's ``DataInputStream.readLine`` reads it
    (ended by LF, CR or CR LF; what ``EventReader`` reads the version and the
    schema with), and what follows it."""
    for i, byte in enumerate(data):
        if byte in (10, 13):
            end = i + 2 if data[i:i + 2] == b"\r\n" else i + 1
            return data[:i], data[end:]
    return data, b""


class _Prefixed(io.RawIOBase):
    """``prefix`` then ``stream``: the bytes of a binary file read past its schema line."""

    def __init__(self, prefix: bytes, stream: IO[bytes]) -> None:
        self._prefix, self._stream = prefix, stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._prefix:
            n = min(len(view), len(self._prefix))
            view[:n], self._prefix = self._prefix[:n], self._prefix[n:]
            return n
        data = self._stream.read(len(view))
        view[:len(data)] = data
        return len(data)


def _json_events(path: Path, lines: Iterable[bytes], report: ReadReport,
                 handle: Callable[[Any], bool], skipped: Callable[[bytes], bool]) -> str:
    """Give each event of an Avro-JSON body to ``handle`` (False: a value that
    is not an event, counted ``garbled_line``), read as Hadoop's
    ``EventReader`` reads it: Avro's JSON decoder over the rest of the stream,
    so any JSON whitespace may stand between events (blank lines, CR LF, CR
    alone, spaces), an event may span lines and a line may hold several.

    The common case, one event per line, costs one ``json.loads`` (or none:
    ``skipped`` drops a whole line of an event type not used). Lines that do
    not parse alone are joined until they do; a join that cannot become JSON
    drops its first line (counted ``garbled_line``) and retries the rest, so
    a cut line costs itself only. Returns ``""`` when the body was read to
    its end, else why it was cut (a corrupt stream, or a last line ending
    without its newline inside an event: the cut of a truncated file)."""
    pending: list[bytes] = []
    try:
        for line in lines:
            if not pending:
                if not line.strip() or skipped(line):
                    continue
                obj = _whole(line)
                if obj is not _NOT_ONE_VALUE:
                    if not handle(obj):
                        report.skip("garbled_line", path, "garbled line")
                    continue
            pending.append(line)
            cut = _drain(path, pending, report, handle, at_end=False)
            if cut:
                return cut
    except READ_ERRORS as exc:
        return f"{type(exc).__name__}: {exc}"
    return _drain(path, pending, report, handle, at_end=True)


_NOT_ONE_VALUE = object()
_DECODER = json.JSONDecoder()
_JSON_WS = " \t\r\n"  # JSON's (and Jackson's) whitespace
MAX_PENDING_LINES = 256  # an event spanning more lines than this is garbled


def _whole(line: bytes) -> Any:
    """The one JSON value ``line`` holds, else ``_NOT_ONE_VALUE``."""
    try:
        return json.loads(line)
    except ValueError:
        return _NOT_ONE_VALUE


def _drain(path: Path, pending: list[bytes], report: ReadReport,
           handle: Callable[[Any], bool], at_end: bool) -> str:
    """Decode the events the ``pending`` lines hold together, leaving an
    unfinished tail in ``pending`` (``at_end``: nothing more will come).
    Returns ``"last line cut short"`` when the file's last line, ending
    without its newline, cannot complete an event (the cut of a truncated
    file), else ``""``."""
    while pending:
        try:
            text: str | None = b"".join(pending).decode("utf-8")
        except UnicodeDecodeError:
            text = None
        pos = 0
        while text is not None:
            while pos < len(text) and text[pos] in _JSON_WS:
                pos += 1
            if pos == len(text):
                pending.clear()
                return ""
            try:
                obj, pos = _DECODER.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                unfinished = exc.pos >= len(text.rstrip(_JSON_WS))
                pending[:] = text[pos:].encode("utf-8").splitlines(keepends=True)
                if unfinished and not at_end and len(pending) < MAX_PENDING_LINES:
                    return ""  # wait for more lines
                break
            if not handle(obj):
                report.skip("garbled_line", path, "garbled line")
        if not pending[-1].endswith((b"\n", b"\r")):
            return "last line cut short"  # only the file's last line lacks its end
        # it cannot become JSON: drop what comes before the last line starting a value
        starts = [i for i, ln in enumerate(pending) if i and ln.lstrip().startswith(b"{")]
        report.skip("garbled_line", path, "garbled line")
        del pending[:starts[-1] if starts else len(pending)]
    return ""


def _skipped_fast(line: bytes, declared: frozenset[str], report: ReadReport) -> bool:
    """Whether ``line`` is one whole event of a type not used, dropped unparsed
    (a cheap look at its type: most events are not used)."""
    line = line.lstrip()  # Hadoop 0.23-2.x write a space before each event
    if not line.startswith(b'{"type":"') or line.count(b'{"type":"') != 1:
        return False
    if not line.rstrip().endswith(b"}"):
        return False
    end = line.find(b'"', _TYPE_AT)
    kind = line[_TYPE_AT:end].decode("ascii", "replace") if end > 0 else ""
    if not kind or kind in _USED:
        return False
    if kind not in declared:
        report.ignore("unknown_event")
    return True


def _event(obj: Any, declared: frozenset[str], job: _Job, path: Path,
           report: ReadReport) -> bool:
    """Apply one decoded event to ``job``; False if it is not an event."""
    try:
        kind = obj["type"]
        body = next(iter(obj["event"].values()))
        if not isinstance(body, dict) or not isinstance(kind, str):
            raise TypeError("event body is not a record")
    except (KeyError, TypeError, StopIteration, AttributeError):
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
