"""Record real RM traffic, cycle by cycle, and replay it offline.

A recording is a directory::

    recording.json          manifest: format, RM/JobHistory URLs, cycles, how it was made
    cycle-0001.yaml         every exchange of cycle 1, in the file format of the
    cycle-0002.yaml         `responses` library (what ``responses._add_from_file`` reads)
    ...

Each cycle file also carries a ``yarn_advisor`` header with the cycle's
``taken_at`` (epoch ms), which becomes the replayed Snapshot's clock.

Replay runs the *real* connectors against the recorded answers through
``responses``; a request the recording lacks fails like an unreachable server
does, so replay exercises the same code and error paths as a live cycle.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import responses
import yaml

from yarn_advisor.connectors.errors import redact_url

FORMAT = 1
MANIFEST = "recording.json"


@dataclass
class CycleRecorder:
    """Collects the exchanges of one cycle at a time and writes them out."""

    out_dir: Path
    exchanges: list[dict[str, Any]] = field(default_factory=list)

    def record(self, method: str, url: str, status: int, content_type: str, body: str) -> None:
        self.exchanges.append({"response": {
            "method": method,
            "url": redact_url(url),
            "status": status,
            "content_type": content_type or "text/plain",
            "body": body,
            "auto_calculate_content_length": False,
            "headers": {},
        }})

    def write_cycle(self, number: int, taken_at: int) -> Path:
        """Write what was collected as cycle ``number`` and start afresh."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / f"cycle-{number:04d}.yaml"
        doc = {"yarn_advisor": {"format": FORMAT, "cycle": number, "taken_at": taken_at},
               "responses": self.exchanges}
        path.write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 20, allow_unicode=True))
        self.exchanges = []
        return path

    def write_manifest(self, **info: Any) -> None:
        """Write the manifest, every URL's userinfo hidden as in the cycle files (which
        is also what a replay then asks for, so it matches them)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"format": FORMAT, **info}, indent=2, sort_keys=True)
        (self.out_dir / MANIFEST).write_text(redact_url(text) + "\n")


@dataclass(frozen=True)
class RecordedCycle:
    number: int
    taken_at: int
    path: Path


@dataclass(frozen=True)
class Recording:
    """A recording directory, read-only."""

    path: Path
    manifest: dict[str, Any]
    cycles: tuple[RecordedCycle, ...]

    @property
    def rm_urls(self) -> list[str]:
        return list(self.manifest["rm_urls"])

    @property
    def history_url(self) -> str | None:
        value = self.manifest.get("history_url")
        return str(value) if value else None


class RecordingError(ValueError):
    """The directory is not a readable recording."""


def open_recording(path: str | Path) -> Recording:
    """Open and check a recording: its manifest and every cycle file, whole, before the
    first cycle is replayed (a broken file is found now, not after cycles were printed).
    Cycles must be numbered 1..N with none missing."""
    root = Path(path)
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise RecordingError(f"{root}: not a recording ({MANIFEST}: {_line(exc)})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT \
            or not manifest.get("rm_urls"):
        raise RecordingError(f"{root}: unsupported recording (format "
                             f"{manifest.get('format') if isinstance(manifest, dict) else None!r})")
    cycles = [_checked_cycle(file) for file in sorted(root.glob("cycle-*.yaml"))]
    if not cycles:
        raise RecordingError(f"{root}: no cycle-*.yaml files")
    for n, cycle in enumerate(cycles, start=1):
        if cycle.number != n:
            raise RecordingError(f"{root}: cycle {n} is missing (cycle-{n:04d}.yaml)")
    return Recording(root, manifest, tuple(cycles))


def _checked_cycle(file: Path) -> RecordedCycle:
    """One cycle file, read whole: header and exchanges in the expected shape."""
    try:
        doc = yaml.load(file.read_bytes().decode("utf-8"), Loader=_Loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RecordingError(f"{file}: not a readable cycle file: {_line(exc)}") from None
    header = doc.get("yarn_advisor") if isinstance(doc, dict) else None
    if not isinstance(header, dict):
        raise RecordingError(f"{file}: missing yarn_advisor header")
    number, taken_at = header.get("cycle"), header.get("taken_at")
    if not isinstance(number, int) or not isinstance(taken_at, int):
        raise RecordingError(f"{file}: the header needs integer 'cycle' and 'taken_at'")
    if file.name != f"cycle-{number:04d}.yaml":
        raise RecordingError(f"{file}: the header says cycle {number}")
    exchanges = doc.get("responses")
    if not isinstance(exchanges, list) or not all(_exchange(x) for x in exchanges):
        raise RecordingError(f"{file}: 'responses' must list recorded exchanges "
                             "(method, url, status, body)")
    return RecordedCycle(number, taken_at, file)


def _exchange(item: object) -> bool:
    r = item.get("response") if isinstance(item, dict) else None
    return isinstance(r, dict) and isinstance(r.get("url"), str) \
        and isinstance(r.get("status"), int) and isinstance(r.get("body"), str)


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@contextlib.contextmanager
def replaying(cycle: RecordedCycle) -> Iterator[responses.RequestsMock]:
    """Serve one recorded cycle to every ``requests`` call inside the block."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        _add_exchanges(mock, cycle.path)
        yield mock


def _add_exchanges(mock: responses.RequestsMock, path: Path) -> None:
    """Register every exchange of a cycle file, exactly as ``responses``' own file
    loader (``_add_from_file``) does, but read with libyaml when PyYAML has it: the
    loader's pure-Python ``safe_load`` took 40 times as long (about 0.1 s a cycle
    of the short-stream recording, most of a replay's time)."""
    doc = yaml.load(path.read_bytes().decode("utf-8"), Loader=_Loader)
    for item in doc["responses"]:
        rsp = item["response"]
        mock.add(method=rsp["method"], url=rsp["url"], body=rsp["body"], status=rsp["status"],
                 headers=rsp.get("headers"),
                 content_type=rsp["content_type"],
                 auto_calculate_content_length=rsp["auto_calculate_content_length"])
