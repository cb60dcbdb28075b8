"""The daemon's log lines: plain text, or one valid JSON object per line.

``logging.json: true`` makes every line a JSON object with ``ts``, ``level``,
``logger`` and ``msg`` (and ``exc`` with a traceback's text), so a log
pipeline can parse each line whatever the message holds (quotes, newlines).

``logging.level`` is the advisor's own level. Other libraries inherit the root
logger, which is held at INFO at least: at DEBUG kazoo logs each request it
sends, its ``Auth`` with the ZooKeeper digest in clear among them. A library is
more verbose only when ``logging.loggers`` names it, and every line, whoever
logged it, has its secrets masked (:func:`yarn_advisor.config.secrets.redact`).
"""

from __future__ import annotations

import json
import logging
import sys

from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.config.secrets import redact

PLAIN = "%(asctime)s %(levelname)s %(message)s"
OWN = "yarn_advisor"


class Redacting(logging.Formatter):
    """Plain lines, secrets masked."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class JsonLines(logging.Formatter):
    """One JSON object per record, its text escaped by the JSON encoder, secrets masked."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": self.formatTime(record), "level": record.levelname,
               "logger": record.name, "msg": redact(record.getMessage())}
        if record.exc_info:
            out["exc"] = redact(self.formatException(record.exc_info))
        return json.dumps(out, ensure_ascii=False)


def setup_logging(cfg: AdvisorConfig) -> None:
    """Log to stderr as text or JSON lines: the advisor at ``logging.level``, other
    libraries at INFO at most unless ``logging.loggers`` gives them a level."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if cfg.logging.json_lines else Redacting(PLAIN))
    own = logging.getLevelName(cfg.logging.level)
    logging.basicConfig(level=max(own, logging.INFO), handlers=[handler], force=True)
    # below INFO only the advisor's own loggers follow it down (NOTSET: they follow the root)
    logging.getLogger(OWN).setLevel(own if own < logging.INFO else logging.NOTSET)
    for name, level in cfg.logging.loggers.items():
        logging.getLogger(name).setLevel(level)
