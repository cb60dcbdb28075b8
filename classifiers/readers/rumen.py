"""Streaming reader of Hadoop Rumen job traces.

A Rumen trace is a stream of JSON job objects written one after another (not a
JSON array), optionally gzipped; some copies start with a ``/* licence */``
comment. Re-packaged copies are read too: a JSON array of the job objects,
one object per line, a UTF-8 byte-order mark, CRLF line ends.
:class:`RumenTrace` yields one typed :class:`RumenJob` at a time and never
holds more than one job's text in memory. A truncated or corrupt trace
does not raise: iteration stops after the last complete job and
:attr:`RumenTrace.problem` says where and why (the caller decides whether a
partial trace is acceptable). Times are epoch milliseconds; ``-1`` means
unknown, as in Rumen itself. The records are those of every reader
(:mod:`~yarn_advisor.classifiers.readers.records`), under their Rumen names.
"""

from __future__ import annotations

import gzip
import json
import logging
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from yarn_advisor.classifiers.readers.records import TraceAttempt as RumenAttempt
from yarn_advisor.classifiers.readers.records import TraceJob as RumenJob
from yarn_advisor.classifiers.readers.records import TraceTask as RumenTask

__all__ = [
    "RumenAttempt", "RumenJob", "RumenTask", "RumenTrace",
    "parse_attempt", "parse_job", "parse_task", "read_trace",
]

log = logging.getLogger(__name__)

_PIECE = 1 << 16
_BETWEEN_JOBS = frozenset("[],\ufeff")  # an array's brackets and commas, a BOM
_CHUNK = 1 << 20
_MEMORY_KEYS = {
    "MAP": ("mapreduce.map.memory.mb", "mapred.job.map.memory.mb"),
    "REDUCE": ("mapreduce.reduce.memory.mb", "mapred.job.reduce.memory.mb"),
}


def _int(value: Any, default: int = -1) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float | str):
        try:
            return int(value)
        except ValueError:
            return default
    return default


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def parse_attempt(obj: Mapping[str, Any]) -> RumenAttempt:
    host = _str(obj.get("hostName"))
    if not host and isinstance(obj.get("location"), dict):
        layers = obj["location"].get("layers")
        host = "/" + "/".join(str(x) for x in layers) if isinstance(layers, list) else ""
    return RumenAttempt(
        attempt_id=_str(obj.get("attemptID")),
        host=host,
        start_ms=_int(obj.get("startTime")),
        finish_ms=_int(obj.get("finishTime")),
        result=_str(obj.get("result")),
    )


def parse_task(obj: Mapping[str, Any], default_type: str) -> RumenTask:
    return RumenTask(
        task_id=_str(obj.get("taskID")),
        type=_str(obj.get("taskType")) or default_type,
        status=_str(obj.get("taskStatus")),
        start_ms=_int(obj.get("startTime")),
        finish_ms=_int(obj.get("finishTime")),
        attempts=tuple(parse_attempt(a) for a in _dicts(obj.get("attempts"))),
        input_bytes=_int(obj.get("inputBytes")),
        input_records=_int(obj.get("inputRecords")),
    )


def _memory(obj: Mapping[str, Any], field: str, task_type: str) -> int:
    value = _int(obj.get(field))
    if value > 0:
        return value
    props = obj.get("jobProperties")
    if isinstance(props, dict):
        for key in _MEMORY_KEYS[task_type]:
            value = _int(props.get(key))
            if value > 0:
                return value
    return -1


def parse_job(obj: Mapping[str, Any]) -> RumenJob:
    """Build a :class:`RumenJob` from one decoded Rumen job object."""
    name = _str(obj.get("jobName"))
    props = obj.get("jobProperties")
    if not name and isinstance(props, dict):
        name = _str(props.get("mapreduce.job.name")) or _str(props.get("mapred.job.name"))
    return RumenJob(
        job_id=_str(obj.get("jobID")),
        user=_str(obj.get("user")),
        name=name,
        queue=_str(obj.get("queue")),
        job_type=_str(obj.get("jobtype")),
        outcome=_str(obj.get("outcome")),
        submit_ms=_int(obj.get("submitTime")),
        launch_ms=_int(obj.get("launchTime")),
        finish_ms=_int(obj.get("finishTime")),
        total_maps=_int(obj.get("totalMaps")),
        total_reduces=_int(obj.get("totalReduces")),
        map_mb=_memory(obj, "jobMapMB", "MAP"),
        reduce_mb=_memory(obj, "jobReduceMB", "REDUCE"),
        heap_mb=_int(obj.get("heapMegabytes")),
        maps=tuple(parse_task(t, "MAP") for t in _dicts(obj.get("mapTasks"))),
        reduces=tuple(parse_task(t, "REDUCE") for t in _dicts(obj.get("reduceTasks"))),
        others=tuple(parse_task(t, "OTHER") for t in _dicts(obj.get("otherTasks"))),
    )


def _open_text(path: Path) -> TextIO:
    with path.open("rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    if gzipped:
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return path.open(encoding="utf-8", errors="replace")


class RumenTrace:
    """Iterate the jobs of one Rumen trace file; see :attr:`problem` afterwards.

    ``problem`` is None when the whole file was read, otherwise a one-line
    description (truncated trace, not a Rumen job stream, unreadable file).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.problem: str | None = None
        self.jobs_read = 0

    def __iter__(self) -> Iterator[RumenJob]:
        self.problem, self.jobs_read = None, 0
        try:
            with _open_text(self.path) as text:
                for obj in self._objects(text):
                    if not isinstance(obj, dict) or "jobID" not in obj:
                        self._report("not a Rumen job object (no jobID)")
                        return
                    job = parse_job(obj)
                    self.jobs_read += 1
                    yield job
        except (OSError, EOFError, gzip.BadGzipFile) as exc:  # truncated gzip, I/O error
            self._report(f"read error: {exc}")

    def _report(self, what: str) -> None:
        self.problem = f"{self.path}: {what} after {self.jobs_read} complete job(s)"
        log.info("rumen: %s", self.problem)

    def _objects(self, text: TextIO) -> Iterator[Any]:
        """Decode concatenated JSON values, skipping whitespace, comments and
        what wraps values in an array (see :data:`_BETWEEN_JOBS`)."""
        decoder, src = json.JSONDecoder(), _Source(text)
        pos = 0
        while True:
            buf = src.buf
            while pos < len(buf) and (buf[pos].isspace() or buf[pos] in _BETWEEN_JOBS):
                pos += 1
            if pos >= len(buf) or (buf[pos] == "/" and pos == len(buf) - 1):
                if src.eof:
                    if pos < len(buf) or src.error:
                        self._report(src.error or "stray '/' at end")
                    return
                pos = src.more(pos)
                continue
            if buf.startswith(("/*", "//"), pos):
                close = "*/" if buf[pos + 1] == "*" else "\n"
                end = buf.find(close, pos + 2)
                if end >= 0:
                    pos = end + len(close)
                elif src.eof:
                    self._report("unterminated comment")
                    return
                else:
                    pos = src.more(pos)
                continue
            try:
                obj, pos = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError as exc:
                if src.eof:
                    self._report(src.error or f"truncated or invalid JSON ({exc.msg})")
                    return
                src.chunk = min(src.chunk * 2, 1 << 26)  # amortise huge job objects
                pos = src.more(pos)
                continue
            src.chunk = _CHUNK
            yield obj


class _Source:
    """A text buffer refilled in small pieces (a truncated gzip then loses at
    most one piece); consumed text is dropped on refill."""

    def __init__(self, text: TextIO) -> None:
        self.text, self.buf, self.eof, self.chunk = text, "", False, _CHUNK
        self.error = ""

    def more(self, pos: int) -> int:
        parts: list[str] = []
        got = 0
        while got < self.chunk and not self.eof:
            try:
                data = self.text.read(_PIECE)
            except (OSError, EOFError, zlib.error) as exc:  # truncated or corrupt gzip
                self.eof, self.error = True, f"{type(exc).__name__}: {exc}"
                break
            self.eof = not data
            parts.append(data)
            got += len(data)
        self.buf = self.buf[pos:] + "".join(parts)
        return 0


def read_trace(path: str | Path) -> tuple[list[RumenJob], str | None]:
    """All jobs of a trace and the problem met (None if it was read whole)."""
    trace = RumenTrace(path)
    jobs = list(trace)
    return jobs, trace.problem
