"""Spark's lz4 and snappy event-log compression, decoded in pure Python.

Spark compresses an event log (``spark.eventLog.compress``) with its
``CompressionCodec``: ``lz4`` writes lz4-java's ``LZ4BlockOutputStream``
framing (``LZ4Block`` magic, then blocks of at most
``spark.io.compression.lz4.blockSize``, each raw or LZ4-compressed), and
``snappy`` writes snappy-java's ``SnappyOutputStream`` framing (a 16-byte
``\\x82SNAPPY\\x00`` header, then length-prefixed raw Snappy blocks). Both are
simple formats around the plain LZ4 block and Snappy codecs, so they are
decoded here without a dependency, one block at a time (streaming). Block
checksums (xxhash32) are not verified: a corrupt block fails to decode or
yields lines that are not JSON, which the readers count. ``zstd`` (Spark's
default codec since 3.x) and ``lzf`` need libraries and stay unsupported.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from typing import IO

LZ4_MAGIC = b"LZ4Block"
SNAPPY_MAGIC = b"\x82SNAPPY\x00"
_LZ4_RAW, _LZ4_COMPRESSED = 0x10, 0x20
_LZ4_HEADER = struct.Struct("<Biii")  # token, compressed length, original length, checksum
_INT_BE = struct.Struct(">i")


class CorruptStream(OSError):
    """A compressed stream whose framing or data does not decode."""


def lz4_block(src: bytes, size: int) -> bytes:
    """Decompress one raw LZ4 block whose decompressed size is ``size``."""
    out = bytearray()
    i, end = 0, len(src)
    while i < end:
        token = src[i]
        i += 1
        n = token >> 4
        if n == 15:
            while True:
                b = src[i]
                i += 1
                n += b
                if b != 255:
                    break
        out += src[i:i + n]
        i += n
        if i >= end:  # the last sequence has literals only
            break
        offset = src[i] | src[i + 1] << 8
        i += 2
        n = (token & 15) + 4
        if n == 19:
            while True:
                b = src[i]
                i += 1
                n += b
                if b != 255:
                    break
        _copy(out, offset, n)
    if len(out) != size:
        raise CorruptStream(f"LZ4 block of {len(out)} bytes, expected {size}")
    return bytes(out)


def snappy_block(src: bytes) -> bytes:
    """Decompress one raw Snappy block (its size is its varint preamble)."""
    size, i = _varint(src, 0)
    out = bytearray()
    end = len(src)
    while i < end:
        tag = src[i]
        i += 1
        kind = tag & 3
        if kind == 0:  # literal
            n = tag >> 2
            if n >= 60:
                width = n - 59
                n = int.from_bytes(src[i:i + width], "little")
                i += width
            n += 1
            out += src[i:i + n]
            i += n
            continue
        if kind == 1:
            n, offset = 4 + ((tag >> 2) & 7), (tag >> 5) << 8 | src[i]
            i += 1
        elif kind == 2:
            n, offset = (tag >> 2) + 1, int.from_bytes(src[i:i + 2], "little")
            i += 2
        else:
            n, offset = (tag >> 2) + 1, int.from_bytes(src[i:i + 4], "little")
            i += 4
        _copy(out, offset, n)
    if len(out) != size:
        raise CorruptStream(f"Snappy block of {len(out)} bytes, expected {size}")
    return bytes(out)


def _copy(out: bytearray, offset: int, n: int) -> None:
    """Append ``n`` bytes copied from ``offset`` back (overlapping: a repeat)."""
    if offset <= 0 or offset > len(out):
        raise CorruptStream(f"match offset {offset} outside the {len(out)} bytes decoded")
    start = len(out) - offset
    if n <= offset:
        out += out[start:start + n]
    else:
        piece = bytes(out[start:])
        out += (piece * (n // offset + 1))[:n]


def _varint(src: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = src[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _exactly(raw: IO[bytes], n: int) -> bytes:
    data = raw.read(n)
    if len(data) != n:
        raise EOFError("compressed stream ends inside a block")
    return data


def lz4_blocks(raw: IO[bytes]) -> Iterator[bytes]:
    """The decompressed blocks of an ``LZ4BlockOutputStream`` stream (and of
    streams concatenated after it)."""
    while True:
        magic = raw.read(len(LZ4_MAGIC))
        if not magic:
            return
        if magic != LZ4_MAGIC:
            raise CorruptStream("not an LZ4Block stream") if len(magic) == 8 else EOFError(
                "compressed stream ends inside a block header")
        token, packed, size, _checksum = _LZ4_HEADER.unpack(_exactly(raw, _LZ4_HEADER.size))
        method = token & 0xF0
        if size == 0:  # the end mark; another stream may follow
            continue
        if packed < 0 or size < 0 or method not in (_LZ4_RAW, _LZ4_COMPRESSED):
            raise CorruptStream(f"bad LZ4Block header (method {method:#x})")
        data = _exactly(raw, packed)
        try:
            yield data if method == _LZ4_RAW else lz4_block(data, size)
        except IndexError:
            raise CorruptStream("LZ4 block ends inside a sequence") from None


def snappy_blocks(raw: IO[bytes]) -> Iterator[bytes]:
    """The decompressed blocks of a ``SnappyOutputStream`` stream."""
    header = raw.read(16)
    if not header.startswith(SNAPPY_MAGIC):
        raise CorruptStream("not a snappy-java stream")
    while True:
        head = raw.read(4)
        if not head:
            return
        if len(head) < 4:
            raise EOFError("compressed stream ends inside a block header")
        if head == SNAPPY_MAGIC[:4]:  # a concatenated stream's header
            _exactly(raw, 12)
            continue
        (packed,) = _INT_BE.unpack(head)
        if packed < 0:
            raise CorruptStream(f"negative Snappy block length {packed}")
        try:
            yield snappy_block(_exactly(raw, packed))
        except IndexError:
            raise CorruptStream("Snappy block ends inside an element") from None


class _Blocks(io.RawIOBase):
    """A readable stream over decompressed blocks (for line iteration)."""

    def __init__(self, raw: IO[bytes], blocks: Iterator[bytes]) -> None:
        self._raw, self._blocks, self._pending = raw, blocks, memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            block = next(self._blocks, None)
            if block is None:
                return 0
            self._pending = memoryview(block)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_lz4(raw: IO[bytes]) -> IO[bytes]:
    return io.BufferedReader(_Blocks(raw, lz4_blocks(raw)), 1 << 16)


def open_snappy(raw: IO[bytes]) -> IO[bytes]:
    return io.BufferedReader(_Blocks(raw, snappy_blocks(raw)), 1 << 16)
