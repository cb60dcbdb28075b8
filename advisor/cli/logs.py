"""The daemon's log lines: plain text, or one valid JSON object per line.

``logging.json: true`` makes every line a JSON object with ``ts``, ``level``,
``logger`` and ``msg`` (and ``exc`` with a traceback's text), so a log
pipeline can parse each line whatever the message holds (quotes, newlines).
"""

from __future__ import annotations

import json
import logging
import sys

from yarn_advisor.config.schema import AdvisorConfig

PLAIN = "%(asctime)s %(levelname)s %(message)s"


class JsonLines(logging.Formatter):
    """One JSON object per record, its text escaped by the JSON encoder."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": self.formatTime(record), "level": record.levelname,
               "logger": record.name, "msg": record.getMessage()}
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def setup_logging(cfg: AdvisorConfig) -> None:
    """Log to stderr at ``logging.level``, as text or JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if cfg.logging.json_lines else logging.Formatter(PLAIN))
    logging.basicConfig(level=cfg.logging.level, handlers=[handler], force=True)
