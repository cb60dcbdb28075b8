"""The RM as one recorded cycle answers it, for tests that run the daemon against a
local server: each read's recorded status, content type and body (never written by
hand), looked up by path and query."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[1]
CYCLE = ROOT / "examples" / "recordings" / "mini-hetero" / "cycle-0005.yaml"
VARYING = frozenset({"finishedTimeBegin"})  # query terms that move with the clock

Key = tuple[str, frozenset[tuple[str, str]]]
Answer = tuple[int, str, bytes]


def key(url: str) -> Key:
    """A read's path and query, without the terms that move with the clock."""
    parts = urlsplit(url)
    return parts.path, frozenset((k, v) for k, v in parse_qsl(parts.query) if k not in VARYING)


def answers(cycle: Path = CYCLE) -> dict[Key, Answer]:
    """Each recorded RM read of ``cycle`` -> status, content type, body."""
    out: dict[Key, Answer] = {}
    for item in yaml.safe_load(cycle.read_text())["responses"]:
        r = item["response"]
        out[key(r["url"])] = (int(r["status"]), r["content_type"], r["body"].encode())
    return out


def send(handler: BaseHTTPRequestHandler, answer: Answer | None) -> bool:
    """Send ``answer`` (a 404 when the recording has none); whether it was there."""
    if answer is None:
        handler.send_error(404)
        return False
    status, ctype, body = answer
    handler.send_response(status)
    handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
    return True
