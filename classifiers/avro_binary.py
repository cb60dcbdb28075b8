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
from collections.abc import Callable
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

    def long(self) -> int:
        """A zig-zag varint (Avro int or long)."""
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


def compile_schema(schema: Any) -> Decoder:
    """The decoder of ``schema`` (decoded JSON of an Avro schema)."""
    return _Compiler().compile(schema, "")


class _Compiler:
    def __init__(self) -> None:
        self.named: dict[str, Decoder] = {}

    def compile(self, schema: Any, namespace: str) -> Decoder:
        if isinstance(schema, list):
            return self._union(schema, namespace)
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
            dec: Decoder = lambda s: symbols[s.long()]  # noqa: E731
            return self._name(schema, namespace, dec)
        if kind == "fixed":
            size = int(schema["size"])
            return self._name(schema, namespace, lambda s: s.take(size))
        if kind == "array":
            return _array(self.compile(schema["items"], namespace))
        if kind == "map":
            return _map(self.compile(schema["values"], namespace))
        raise ValueError(f"unknown Avro type {kind!r}")

    def _reference(self, name: str, namespace: str) -> Decoder:
        simple = _SIMPLE.get(name)
        if simple is not None:
            return simple
        for full in (name, f"{namespace}.{name}" if namespace else name,
                     name.rsplit(".", 1)[-1]):
            if full in self.named:
                return self.named[full]
        raise ValueError(f"undefined Avro type {name!r}")

    def _name(self, schema: dict[str, Any], namespace: str, dec: Decoder) -> Decoder:
        name = str(schema["name"])
        space = str(schema.get("namespace") or namespace)
        full = name if "." in name or not space else f"{space}.{name}"
        self.named[full] = self.named[full.rsplit(".", 1)[-1]] = dec
        return dec

    def _record(self, schema: dict[str, Any], namespace: str) -> Decoder:
        fields: list[tuple[str, Decoder]] = []

        def record(s: AvroStream) -> dict[str, Any]:
            return {name: dec(s) for name, dec in fields}

        self._name(schema, namespace, record)  # before the fields: a record may refer to itself
        space = str(schema.get("namespace") or namespace)
        if "." in str(schema["name"]):
            space = str(schema["name"]).rsplit(".", 1)[0]
        for f in schema["fields"]:
            fields.append((str(f["name"]), self.compile(f["type"], space)))
        return record

    def _union(self, branches: list[Any], namespace: str) -> Decoder:
        decs = [self.compile(b, namespace) for b in branches]
        return lambda s: decs[s.long()](s)


def _array(item: Decoder) -> Decoder:
    def array(s: AvroStream) -> list[Any]:
        out: list[Any] = []
        while True:
            n = s.long()
            if n == 0:
                return out
            if n < 0:
                n = -n
                s.long()  # the block's size in bytes
            out.extend(item(s) for _ in range(n))

    return array


def _map(value: Decoder) -> Decoder:
    def mapping(s: AvroStream) -> dict[str, Any]:
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
                out[key] = value(s)

    return mapping


def _string(s: AvroStream) -> str:
    return s.take(s.long()).decode("utf-8", "replace")


_FLOAT, _DOUBLE = struct.Struct("<f"), struct.Struct("<d")
_SIMPLE: dict[str, Decoder] = {
    "null": lambda s: None,
    "boolean": lambda s: s.take(1) != b"\x00",
    "int": AvroStream.long,
    "long": AvroStream.long,
    "float": lambda s: _FLOAT.unpack(s.take(4))[0],
    "double": lambda s: _DOUBLE.unpack(s.take(8))[0],
    "bytes": lambda s: s.take(s.long()),
    "string": _string,
}
