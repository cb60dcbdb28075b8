"""With ``logging.json: true`` every line the daemon logs is one valid JSON object."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import yaml

from yarn_advisor.advisor.cli.logs import JsonLines

ROOT = Path(__file__).resolve().parents[2]


def test_a_replayed_run_logs_only_valid_json_lines(tmp_path: Path) -> None:
    """The configuration line (JSON inside a message) and each cycle's line parse."""
    cfg = tmp_path / "advisor.yaml"
    cfg.write_text(yaml.safe_dump({"logging": {"json": True}, "server": {"enabled": False},
                                   "state_dir": str(tmp_path / "state")}))
    done = subprocess.run(
        [sys.executable, "-m", "yarn_advisor.advisor.cli.main", "run", "--once",
         "--replay", str(ROOT / "examples/recordings/ha-standby"), "--config", str(cfg)],
        capture_output=True, text=True, timeout=120)
    lines = done.stderr.splitlines()
    assert len(lines) >= 2, done.stderr
    records = [json.loads(line) for line in lines]
    assert all(set(r) >= {"ts", "level", "logger", "msg"} for r in records)
    assert any(r["msg"].startswith("configuration ") and '"dry_run"' in r["msg"]
               for r in records)
    assert any("cycle" in r["msg"] for r in records)


def test_quotes_newlines_and_tracebacks_stay_one_line() -> None:
    try:
        raise ValueError('bad "value"\nsecond line')
    except ValueError:
        record = logging.LogRecord("yarn_advisor", logging.ERROR, __file__, 1,
                                   'cycle "%s" failed\n%s', ("x", "more"), sys.exc_info())
    line = JsonLines().format(record)
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["msg"] == 'cycle "x" failed\nmore'
    assert 'bad "value"' in parsed["exc"] and parsed["level"] == "ERROR"


def test_an_unknown_logging_key_names_the_keys_as_written() -> None:
    """The configuration's error lists the key as the file spells it (json, not the
    model's field name json_lines)."""
    from yarn_advisor.config.base import ConfigError
    from yarn_advisor.config.schema import from_dict

    try:
        from_dict({"logging": {"json_lines": True}})
    except ConfigError as exc:
        assert exc.errors == ["logging.json_lines: unknown key (known: json, level, loggers)"]
    else:
        raise AssertionError("json_lines was accepted")
