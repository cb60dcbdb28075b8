"""A real ``.jhist`` re-laid out as Hadoop's ``EventReader`` also reads it.

``EventReader`` reads the version and the schema with ``readLine`` and hands
the rest of the stream to Avro's JSON decoder, a JSON token stream: any JSON
whitespace may stand between events, an event may span lines and a line may
hold several. Each layout keeps the file's bytes and changes only the
whitespace between (or inside, between tokens) its events, so a reader must
read every layout as it reads the original.
"""

from __future__ import annotations

import re


def event_lines(data: bytes) -> tuple[bytes, bytes, list[bytes]]:
    """(version line, schema line, event lines without their whitespace)."""
    version, schema, body = data.split(b"\n", 2)
    return version, schema, [ln.strip() for ln in body.split(b"\n") if ln.strip()]


def layouts(data: bytes) -> dict[str, bytes]:
    version, schema, events = event_lines(data)
    head = version + b"\n" + schema + b"\n"

    def split(event: bytes) -> bytes:  # a line break between tokens of one event
        return re.sub(rb',"event":', b',\n  "event":\n', event, count=1)

    return {
        "blank lines": head + b"".join(e + b"\n\n" for e in events),
        "several blank lines": head + b"\n\n" + b"".join(e + b"\n\n\n\n" for e in events),
        "CR LF blank lines": (version + b"\r\n" + schema + b"\r\n"
                              + b"".join(e + b"\r\n\r\n" for e in events)),
        "whitespace lines": head + b"".join(e + b"\n \t \n\t\n" for e in events),
        "CR line ends": version + b"\r" + schema + b"\r" + b"".join(e + b"\r\r" for e in events),
        "events across lines": head + b"".join(split(e) + b"\n\n" for e in events),
        "two events a line": head + b"".join(
            e + (b"\n\n" if i % 2 else b" ") for i, e in enumerate(events)) + b"\n",
        "no newline at the end": head + b"\n\n".join(events),
    }
