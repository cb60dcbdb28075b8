"""Record real RM traffic, cycle by cycle, and replay it offline.

A recording is a directory::

    recording.json          manifest: format, RM/JobHistory URLs, cycles, how it was made
    cycle-0001.yaml         every exchange of cycle 1, in the file format of the
    cycle-0002.yaml         `responses` library (``responses._add_from_file``)
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
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.out_dir / MANIFEST).write_text(
            json.dumps({"format": FORMAT, **info}, indent=2, sort_keys=True) + "\n")


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
    root = Path(path)
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise RecordingError(f"{root}: not a recording ({MANIFEST}: {exc})") from exc
    if manifest.get("format") != FORMAT or not manifest.get("rm_urls"):
        raise RecordingError(f"{root}: unsupported recording format {manifest.get('format')!r}")
    cycles = []
    for file in sorted(root.glob("cycle-*.yaml")):
        header = _header(file)
        cycles.append(RecordedCycle(int(header["cycle"]), int(header["taken_at"]), file))
    if not cycles:
        raise RecordingError(f"{root}: no cycle-*.yaml files")
    return Recording(root, manifest, tuple(cycles))


def _header(file: Path) -> dict[str, Any]:
    """Read only the ``yarn_advisor`` header (the first lines) of a cycle file."""
    lines = []
    with file.open() as fh:
        for line in fh:
            if line.startswith("responses:"):
                break
            lines.append(line)
    header = (yaml.safe_load("".join(lines)) or {}).get("yarn_advisor")
    if not isinstance(header, dict) or "taken_at" not in header:
        raise RecordingError(f"{file}: missing yarn_advisor header")
    return header


@contextlib.contextmanager
def replaying(cycle: RecordedCycle) -> Iterator[responses.RequestsMock]:
    """Serve one recorded cycle to every ``requests`` call inside the block."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock._add_from_file(cycle.path)
        yield mock
