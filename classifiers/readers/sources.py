"""What the trace readers share: the read report, opening (compressed) files, walking paths.

Every reader (JobHistory, Spark event logs, task CSV, the Google, Alibaba
and SWF traces) is a :class:`FormatReader`: it takes the paths an operator
gives, yields :class:`~yarn_advisor.classifiers.readers.records.TraceJob`
records one at a time, and counts what it could not use in a
:class:`ReadReport` instead of raising: a bad record is skipped, counted by
kind, and the first few are described with their file. Only an input that
cannot be this format at all (a CSV without a required column) raises
:class:`SourceError`.

Compression is recognised by content, not name: gzip, bzip2 and xz are read
with the standard library; Spark's ``lz4`` and ``snappy`` event-log codecs by
:mod:`~yarn_advisor.classifiers.readers.spark_codecs` (pure Python). Spark's ``zstd``
(its event-log default in recent versions) and ``lzf``, and the framed Snappy
format, need libraries this package does not depend on: such a file is
counted ``unsupported_file`` with its codec named, never misread.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import lzma
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar, Protocol, TypeVar

from yarn_advisor.classifiers.readers.records import TraceJob, TraceTask
from yarn_advisor.classifiers.readers.spark_codecs import open_lz4, open_snappy

MAX_PROBLEMS = 20
# Damage: records or files skipped because they are broken or unreadable.
DAMAGE = (
    "unreadable_file",  # I/O error, corrupt compression
    "unsupported_file",  # not this format, or a codec or encoding not read
    "truncated_file",  # ends inside a record or before its job's end
    "garbled_line",  # not valid JSON (or UTF-8)
    "garbled_record",  # binary data that does not decode: the rest of its file is lost
    "missing_field",  # a record without a field it needs
    "bad_row",  # a CSV row with a missing or invalid value
)
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"LZ4Block", "lz4"),
    (b"\x82SNAPPY\x00", "snappy"),
    (b"\xff\x06\x00\x00sNaPpY", "snappy-framed"),
    (b"ZV\x00", "lzf"),
    (b"ZV\x01", "lzf"),
)
_OPENERS: dict[str, Callable[[Path], Any]] = {
    "gzip": gzip.GzipFile,
    "bzip2": bz2.BZ2File,
    "xz": lzma.LZMAFile,
    "lz4": lambda p: open_lz4(p.open("rb")),
    "snappy": lambda p: open_snappy(p.open("rb")),
}
# What a corrupt or truncated compressed stream raises while being read
# (spark_codecs.CorruptStream is an OSError).
READ_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError)

T = TypeVar("T")


def damage_of(exc: BaseException) -> str:
    """The damage kind of a read error: a stream that ends too soon is a
    truncated file, anything else an unreadable one."""
    return "truncated_file" if isinstance(exc, EOFError) else "unreadable_file"


class SourceError(Exception):
    """The input cannot be read as this format at all (a clear, one-line reason)."""


class UnsupportedCodec(Exception):
    """A file compressed with a codec this package does not read."""


@dataclass
class ReadReport:
    """What one reader met: files, jobs and tasks read; records skipped by kind.

    ``skipped`` counts damage (kinds in :data:`DAMAGE`); ``ignored`` counts
    what is not damage but not used either (event types the reader does not
    know, logs of applications still running). ``problems`` describes the
    first :data:`MAX_PROBLEMS` damaged files or records, with their path.
    """

    reader: str
    files: int = 0
    jobs: int = 0
    tasks: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    ignored: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    more_problems: int = 0

    def skip(self, kind: str, path: str | Path, what: str, n: int = 1) -> None:
        """Count ``n`` damaged records of ``kind`` in ``path`` and describe them."""
        self.skipped[kind] = self.skipped.get(kind, 0) + n
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{path}: {what}")
        else:
            self.more_problems += 1

    def ignore(self, kind: str, n: int = 1) -> None:
        if n:
            self.ignored[kind] = self.ignored.get(kind, 0) + n

    @property
    def damaged(self) -> int:
        """Damaged records or files met (0: everything was read whole)."""
        return sum(self.skipped.values())

    def problem_lines(self) -> list[str]:
        more = [f"... and {self.more_problems} more"] if self.more_problems else []
        return self.problems + more

    def to_json(self) -> dict[str, Any]:
        return {
            "reader": self.reader,
            "files": self.files,
            "jobs": self.jobs,
            "tasks": self.tasks,
            "skipped": dict(sorted(self.skipped.items())),
            "ignored": dict(sorted(self.ignored.items())),
        }


class FormatReader:
    """What every trace reader repeats: the paths it was given, a fresh
    :class:`ReadReport` (named :attr:`READER`) for each pass, and each job it
    yields counted there (jobs, and tasks of every kind).

    A format yields its jobs from :meth:`read`; one whose per-file function
    counts its own jobs (it is also called without a reader) sets
    :attr:`COUNTS` False.
    """

    READER: ClassVar[str] = ""
    COUNTS: ClassVar[bool] = True

    def __init__(self, paths: Iterable[str | Path]) -> None:
        self.paths = [str(p) for p in paths]
        self.report = ReadReport(self.READER)

    def __iter__(self) -> Iterator[TraceJob]:
        self.report = report = ReadReport(self.READER)
        for job in self.read(report):
            if self.COUNTS:
                report.jobs += 1
                report.tasks += len(job.maps) + len(job.reduces) + len(job.stage_tasks)
            yield job

    def read(self, report: ReadReport) -> Iterator[TraceJob]:
        """The jobs of :attr:`paths`, in the format's order; damage counted in ``report``."""
        raise NotImplementedError


def stage_job(job_id: str, tasks: tuple[TraceTask, ...], framework: str, *, user: str = "",
              name: str = "", queue: str = "", outcome: str = "", total_maps: int = -1,
              submit_ms: int | None = None) -> TraceJob:
    """A job of another framework than MapReduce: its tasks in ``stage_tasks``,
    launched at its first task's start (submitted then too unless told),
    finished at its last task's end, no per-type container ask (-1)."""
    launch = min(t.start_ms for t in tasks)
    return TraceJob(
        job_id=job_id, user=user, name=name, queue=queue, job_type="", outcome=outcome,
        submit_ms=launch if submit_ms is None else submit_ms, launch_ms=launch,
        finish_ms=max(t.finish_ms for t in tasks), total_maps=total_maps, total_reduces=0,
        map_mb=-1, reduce_mb=-1, heap_mb=-1, maps=(), reduces=(), framework=framework,
        stage_tasks=tasks,
    )


def scaled_mb(text: str | bytes, scale: float, most: float = float("inf")) -> int:
    """A request the trace gives as a share (``0.25``, or a percentage) in MiB
    at ``scale`` MiB per unit; -1 if not a number, not above 0 or above ``most``."""
    try:
        value = float(text)
    except ValueError:
        return -1
    return round(value * scale) if 0 < value <= most else -1


class JobReader(Protocol):
    """A reader of one history: its paths, its jobs (one pass), its report."""

    paths: list[str]
    report: ReadReport

    def __iter__(self) -> Iterator[TraceJob]: ...


def codec_of(path: Path) -> str | None:
    """The compression of ``path`` by its first bytes (None: not compressed)."""
    with path.open("rb") as fh:
        head = fh.read(16)
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


def open_binary(path: Path) -> IO[bytes]:
    """``path`` opened for reading, decompressed if gzip, bzip2 or xz.

    Raises :class:`UnsupportedCodec` for Spark's zstd, lz4, lzf and snappy
    streams, :class:`OSError` if the file cannot be opened.
    """
    codec = codec_of(path)
    if codec is None:
        return path.open("rb")
    opener = _OPENERS.get(codec)
    if opener is None:
        raise UnsupportedCodec(codec)
    stream: IO[bytes] = opener(path)
    return stream


def read_file(path: Path, report: ReadReport, read: Callable[[IO[bytes]], T | None],
              unsupported: str = "{codec} compression is not read") -> T | None:
    """Count ``path`` as read and give it, opened (decompressed), to ``read``.

    None if it could not be read, counted in ``report``: ``unsupported_file``
    for a codec not read (described by ``unsupported``), ``truncated_file`` or
    ``unreadable_file`` for an I/O error or a stream cut or corrupt inside its
    first block, ``truncated_file`` for CSV the :mod:`csv` module cannot split
    further (a NUL byte: what was read before it stays read); or if ``read``
    returned None (it counts its own reason).
    Other exceptions of ``read`` propagate.
    """
    report.files += 1
    try:
        with open_binary(path) as stream:
            return read(stream)
    except UnsupportedCodec as exc:
        report.skip("unsupported_file", path, unsupported.format(codec=exc))
    except READ_ERRORS as exc:  # unopenable, corrupt, or cut inside its first block
        report.skip(damage_of(exc), path, f"{type(exc).__name__}: {exc}")
    except csv.Error as exc:
        report.skip("truncated_file", path, f"CSV error: {exc}")
    return None


def walk_files(root: Path) -> Iterator[Path]:
    """Every file under ``root`` (depth first, names sorted, hidden ones skipped)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(folder) / name


def as_paths(paths: Iterable[str | Path]) -> list[Path]:
    return [Path(p) for p in paths]


def feed_lines(path: Path, stream: IO[bytes], report: ReadReport,
               handle: Callable[[bytes], bool]) -> str:
    """Give each non-blank line of ``stream`` to ``handle`` (which returns
    False for a line that is not valid JSON: counted ``garbled_line``).

    Returns ``""`` when the stream was read to its end, else why it was cut:
    a corrupt or truncated compressed stream, or a last line ending without
    its newline that ``handle`` could not read (the cut of a truncated file,
    not counted as a garbled line: the caller reports the truncation).
    """
    garbled: bytes | None = None
    try:
        for line in stream:
            if garbled is not None:
                report.skip("garbled_line", path, "garbled line")
                garbled = None
            if line.strip() and not handle(line):
                garbled = line
    except READ_ERRORS as exc:
        return f"{type(exc).__name__}: {exc}"
    if garbled is not None:
        if not garbled.endswith(b"\n"):
            return "last line cut short"
        report.skip("garbled_line", path, "garbled line")
    return ""
