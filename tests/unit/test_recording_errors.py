"""A broken recording is refused whole at open, with the file named: never a traceback,
never cycles printed and then a crash, never a missing cycle skipped silently."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from yarn_advisor.advisor.cli.main import main
from yarn_advisor.connectors.replay import RecordingError, open_recording

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "examples" / "recordings" / "mini-hetero"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    dst = tmp_path / "rec"
    shutil.copytree(SOURCE, dst)
    return dst


def _break(rec: Path, how: str) -> str:
    f = rec / "cycle-0007.yaml"
    text = f.read_text()
    if how == "header_yaml":
        f.write_text(text.replace("yarn_advisor:", "yarn_advisor: [", 1))
        return "cycle-0007.yaml: not a readable cycle file"
    if how == "no_cycle_key":
        f.write_text(text.replace("  cycle: 7\n", "", 1))
        return "cycle-0007.yaml: the header needs integer 'cycle'"
    if how == "binary":
        f.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
        return "cycle-0007.yaml: not a readable cycle file"
    if how == "truncated":
        f.write_text(text[: len(text) // 2])
        return "cycle-0007.yaml"
    if how == "missing":
        f.unlink()
        return "cycle 7 is missing (cycle-0007.yaml)"
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["header_yaml", "no_cycle_key", "binary", "truncated",
                                 "missing"])
def test_a_broken_recording_is_refused_at_open(copy: Path, how: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    expected = _break(copy, how)
    with pytest.raises(RecordingError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        open_recording(copy)
    assert main(["replay", str(copy)]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # nothing replayed before the error
    assert err.startswith("yarn-advisor: ") and "Traceback" not in err and expected in err


def test_an_intact_recording_opens() -> None:
    assert len(open_recording(SOURCE).cycles) == 40
