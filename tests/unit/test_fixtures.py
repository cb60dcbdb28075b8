"""tests/fixtures holds only what its PROVENANCE.md accounts for, and each copied
file is still the blob it names (``git hash-object``), byte for byte."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROVENANCE = FIXTURES / "PROVENANCE.md"
ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| [^|]+ \| `[^`]+` \| `(?P<blob>[0-9a-f]{12,40})` "
                 r"\| (?P<bytes>\d+) \|")
# the two extracted sets, the bodies recorded from the mini cluster's RM and the
# licence texts, each described in PROVENANCE.md
EXTRACTED = ("hadoop-rest-docs/", "bk-base-yarn-examples/", "rm-plugin-jmx/", "rm-activities/",
             "LICENSES/")


def git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def copied() -> dict[str, tuple[str, int]]:
    rows = {}
    for line in PROVENANCE.read_text().splitlines():
        found = ROW.match(line)
        if found:
            rows[found["file"]] = (found["blob"], int(found["bytes"]))
    return rows


def test_every_copied_file_is_the_blob_its_row_names() -> None:
    rows = copied()
    assert len(rows) >= 20, "the table of copied files was not found"
    for name, (blob, size) in rows.items():
        data = (FIXTURES / name).read_bytes()
        assert (len(data), git_blob(data)[:len(blob)]) == (size, blob), name


def test_every_file_is_accounted_for() -> None:
    rows = copied()
    files = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.is_file())
    unaccounted = [f for f in files if f not in rows and f != "PROVENANCE.md"
                   and not f.startswith(EXTRACTED)]
    assert not unaccounted, f"in tests/fixtures but not in its PROVENANCE.md: {unaccounted}"
    text = PROVENANCE.read_text()
    for licence in (FIXTURES / "LICENSES").iterdir():
        assert f"`LICENSES/{licence.name}`" in text, licence.name
