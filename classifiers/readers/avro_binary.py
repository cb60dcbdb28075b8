"""A small decoder of Avro binary data, driven by a writer's schema.

Hadoop 3 writes job history in binary Avro by default
(``mapreduce.jobhistory.jhist.format=binary``): an ``Avro-Binary`` line, the
``Event`` schema as one line of JSON, then the events encoded back to back
with Avro's binary encoding (no container file, no sync markers). This
module compiles that schema into decoding functions and reads one datum at
a time from a stream, refilling a buffer in chunks (a file is never read
whole). Values come out as JSON would decode them, but with unions
unwrapped: records as dicts, enums as their symbol, arrays as lists, maps
as dicts, bytes and fixed as bytes. It covers the whole Avro 1.x type set
the job history schemas use; no dependency needed.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO, Any

Decoder = Callable[["AvroStream"], Any]
_CHUNK = 1 << 20
_PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")


class AvroStream:
    """A byte stream read through a buffer; :meth:`at_end` tells whether a
    datum can start. Running out inside a datum raises :class:`EOFError`."""

    __slots__ = ("buf", "pos", "stream")

    def __init__(self, stream: IO[bytes], head: bytes = b"") -> None:
        self.stream, self.buf, self.pos = stream, head, 0

    def _fill(self, n: int) -> None:
        more = self.stream.read(max(n, _CHUNK))
        self.buf = self.buf[self.pos:] + more
        self.pos = 0
        if len(self.buf) < n:
            raise EOFError("stream ends inside a record")

    def take(self, n: int) -> bytes:
        if n < 0:
            raise ValueError(f"negative length {n}")
        if self.pos + n > len(self.buf):
            self._fill(n)
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def advance(self, n: int) -> None:
        if n < 0:
            raise ValueError(f"negative length {n}")
        if self.pos + n > len(self.buf):
            self._fill(n)
        self.pos += n

    def long(self) -> int:
        """A zig-zag varint (Avro int or long)."""
        pos = self.pos
        if pos < len(self.buf) and self.buf[pos] < 0x80:  # one byte: most of them
            self.pos = pos + 1
            b = self.buf[pos]
            return (b >> 1) ^ -(b & 1)
        if self.pos + 10 > len(self.buf):
            with contextlib.suppress(EOFError):  # a short varint at the very end is whole
                self._fill(10)
        buf, pos = self.buf, self.pos
        shift = result = 0
        while True:
            if pos >= len(buf):
                raise EOFError("stream ends inside a number")
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        self.pos = pos
        return (result >> 1) ^ -(result & 1)

    def at_end(self) -> bool:
        if self.pos < len(self.buf):
            return False
        self.buf, self.pos = self.stream.read(_CHUNK), 0
        return not self.buf


def compile_schema(schema: Any, keep: Iterable[str] | None = None) -> Decoder:
    """The decoder of ``schema`` (decoded JSON of an Avro schema).

    With ``keep``, records hold only the fields named in it: the others are
    skipped without being built (a job history's counters are most of its
    bytes, and an event the caller does not use is skipped whole the same way).
    """
    return _Compiler(None if keep is None else frozenset(keep)).compile(schema, "").read


@dataclass(frozen=True, slots=True)
class _Codec:
    read: Decoder
    skip: Callable[[AvroStream], None]


class _Compiler:
    def __init__(self, keep: frozenset[str] | None) -> None:
        self.keep = keep
        self.named: dict[str, _Codec] = {}

    def compile(self, schema: Any, namespace: str) -> _Codec:
        if isinstance(schema, list):
            return _union([self.compile(b, namespace) for b in schema])
        if isinstance(schema, str):
            return self._reference(schema, namespace)
        if not isinstance(schema, dict):
            raise ValueError(f"not an Avro schema: {schema!r}")
        kind = schema.get("type")
        if kind in _PRIMITIVES:
            return self._reference(kind, namespace)
        if kind == "record" or kind == "error":
            return self._record(schema, namespace)
        if kind == "enum":
            symbols = list(schema["symbols"])
            return self._name(schema, namespace, _Codec(lambda s: symbols[s.long()], _skip_long))
        if kind == "fixed":
            size = int(schema["size"])
            return self._name(schema, namespace,
                              _Codec(lambda s: s.take(size), lambda s: s.advance(size)))
        if kind == "array":
            return _array(self.compile(schema["items"], namespace))
        if kind == "map":
            return _map(self.compile(schema["values"], namespace))
        raise ValueError(f"unknown Avro type {kind!r}")

    def _reference(self, name: str, namespace: str) -> _Codec:
        simple = _SIMPLE.get(name)
        if simple is not None:
            return simple
        for full in (name, f"{namespace}.{name}" if namespace else name,
                     name.rsplit(".", 1)[-1]):
            if full in self.named:
                return self.named[full]
        raise ValueError(f"undefined Avro type {name!r}")

    def _name(self, schema: dict[str, Any], namespace: str, codec: _Codec) -> _Codec:
        name = str(schema["name"])
        space = str(schema.get("namespace") or namespace)
        full = name if "." in name or not space else f"{space}.{name}"
        self.named[full] = self.named[full.rsplit(".", 1)[-1]] = codec
        return codec

    def _record(self, schema: dict[str, Any], namespace: str) -> _Codec:
        fields: list[tuple[str | None, _Codec]] = []  # None: skipped

        def read(s: AvroStream) -> dict[str, Any]:
            out = {}
            for name, codec in fields:
                if name is None:
                    codec.skip(s)
                else:
                    out[name] = codec.read(s)
            return out

        def skip(s: AvroStream) -> None:
            for _, codec in fields:
                codec.skip(s)

        codec = self._name(schema, namespace, _Codec(read, skip))  # a record may refer to itself
        space = str(schema.get("namespace") or namespace)
        if "." in str(schema["name"]):
            space = str(schema["name"]).rsplit(".", 1)[0]
        for f in schema["fields"]:
            name = str(f["name"])
            kept = self.keep is None or name in self.keep
            fields.append((name if kept else None, self.compile(f["type"], space)))
        return codec


def _union(branches: list[_Codec]) -> _Codec:
    def skip(s: AvroStream) -> None:
        branches[s.long()].skip(s)

    return _Codec(lambda s: branches[s.long()].read(s), skip)


def _blocks(s: AvroStream, item: Callable[[AvroStream], None]) -> None:
    """Skip the blocks of an array or map (a block with a byte size at once)."""
    while True:
        n = s.long()
        if n == 0:
            return
        if n < 0:
            s.advance(s.long())
            continue
        for _ in range(n):
            item(s)


def _array(item: _Codec) -> _Codec:
    def read(s: AvroStream) -> list[Any]:
        out: list[Any] = []
        while True:
            n = s.long()
            if n == 0:
                return out
            if n < 0:
                n = -n
                s.long()  # the block's size in bytes
            out.extend(item.read(s) for _ in range(n))

    return _Codec(read, lambda s: _blocks(s, item.skip))


def _map(value: _Codec) -> _Codec:
    def read(s: AvroStream) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while True:
            n = s.long()
            if n == 0:
                return out
            if n < 0:
                n = -n
                s.long()
            for _ in range(n):
                key = _string(s)
                out[key] = value.read(s)

    def entry(s: AvroStream) -> None:
        _skip_bytes(s)
        value.skip(s)

    return _Codec(read, lambda s: _blocks(s, entry))


def _string(s: AvroStream) -> str:
    return s.take(s.long()).decode("utf-8", "replace")


def _skip_long(s: AvroStream) -> None:
    s.long()


def _skip_bytes(s: AvroStream) -> None:
    s.advance(s.long())


_FLOAT, _DOUBLE = struct.Struct("<f"), struct.Struct("<d")
_SIMPLE: dict[str, _Codec] = {
    "null": _Codec(lambda s: None, lambda s: None),
    "boolean": _Codec(lambda s: s.take(1) != b"\x00", lambda s: s.advance(1)),
    "int": _Codec(AvroStream.long, _skip_long),
    "long": _Codec(AvroStream.long, _skip_long),
    "float": _Codec(lambda s: _FLOAT.unpack(s.take(4))[0], lambda s: s.advance(4)),
    "double": _Codec(lambda s: _DOUBLE.unpack(s.take(8))[0], lambda s: s.advance(8)),
    "bytes": _Codec(lambda s: s.take(s.long()), _skip_bytes),
    "string": _Codec(_string, _skip_bytes),
}
