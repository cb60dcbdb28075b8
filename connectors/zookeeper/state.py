"""Versioned advisor state in ZooKeeper: compare-and-set, chunking, checksums.

One named state (``classifier``, ``actuator``, ``policy.haste``, ...) is one
*head* znode ``<base>/state/<name>``. Its content is a one-line JSON header
and, when the compressed payload fits, the payload itself::

    {"magic": "yarn-advisor-state", "format": 1, "codec": "zlib", "size": ...,
     "sha256": "...", "chunks": 0, "generation": "<uuid4 hex>"}\\n<payload>

A payload larger than ``chunk_size`` (a znode holds at most ``jute.maxbuffer``,
1 MiB by default, and so does one request, so no single transaction can carry
a large state) is written first as immutable chunks
``<base>/chunks/<name>/<generation>-<i>``, which no reader looks at yet; then
one transaction commits it: it checks that every chunk is still there and,
when fenced, that the writer's leader lock znode still exists, and sets the
head with the expected version (the compare-and-set). The head switch is the
only commit point, so a reader sees the old state or the new one, never a
mix: chunks are named by generation and never rewritten, and a reader that
finds a chunk of its generation gone (a newer commit cleaned it up) reads the
head again. The SHA-256 of the whole state and the format version in the
header make a corrupt or incompatible state a clear :class:`ParseError`.
"""

from __future__ import annotations

import hashlib
import json
import uuid
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from kazoo.exceptions import (
    BadVersionError,
    KazooException,
    NodeExistsError,
    NoNodeError,
    RolledBackError,
)

from yarn_advisor.connectors.errors import (
    ConflictError,
    NotLeaderError,
    ParseError,
    UnavailableError,
)

MAGIC = "yarn-advisor-state"
FORMAT = 1
CODECS: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    "zlib": (lambda b: zlib.compress(b, 6), zlib.decompress),
    "none": (lambda b: b, lambda b: b),
}
DEFAULT_CHUNK_SIZE = 512 * 1024  # well under the 1 MiB jute.maxbuffer, with room for the header
READ_ATTEMPTS = 5  # re-reads of the head when a concurrent commit replaced our generation

T = TypeVar("T")


@dataclass(frozen=True)
class StateHeader:
    """What the head znode says about the stored state."""

    magic: str
    format: int
    codec: str
    size: int
    sha256: str
    chunks: int
    generation: str

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode() + b"\n"


def parse_head(where: str, raw: bytes) -> tuple[StateHeader, bytes]:
    """Split a head znode into its header and its inline payload; reject what we
    cannot read (not ours, another format, unknown codec) with a clear reason."""
    line, sep, inline = raw.partition(b"\n")
    try:
        fields: Any = json.loads(line) if sep else None
    except ValueError:
        fields = None
    if not isinstance(fields, dict) or fields.get("magic") != MAGIC:
        raise ParseError(f"{where} holds no yarn-advisor state header")
    if fields.get("format") != FORMAT:
        raise ParseError(f"{where} is state format {fields.get('format')!r}; this advisor "
                         f"reads format {FORMAT}: upgrade the advisor or remove the state")
    try:
        header = StateHeader(**fields)
    except TypeError as exc:
        raise ParseError(f"{where}: malformed state header: {exc}") from None
    if header.codec not in CODECS:
        raise ParseError(f"{where}: unknown state codec {header.codec!r}")
    if header.chunks < 0 or header.size < 0:
        raise ParseError(f"{where}: malformed state header: negative size or chunks")
    return header, inline


def decode_payload(where: str, header: StateHeader, payload: bytes) -> bytes:
    """Decompress and verify size and SHA-256; a mismatch is corruption."""
    try:
        data = CODECS[header.codec][1](payload)
    except zlib.error as exc:
        raise ParseError(f"{where}: corrupt state ({exc})") from None
    if len(data) != header.size or hashlib.sha256(data).hexdigest() != header.sha256:
        raise ParseError(f"{where}: corrupt state: checksum or size does not match the header")
    return data


class StateStore:
    """Named, versioned states under ``base`` on an already started client.

    ``get`` returns ``(data, version)`` or ``None``; ``put`` writes only if the
    head is still at ``expected_version`` (``None``: it must not exist yet)
    and returns the new version. Every ZooKeeper failure goes through
    ``guard`` (the connector's error boundary) and leaves as a
    :mod:`~yarn_advisor.connectors.errors` type.
    """

    def __init__(self, client: Any, base: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE,
                 codec: str = "zlib",
                 guard: Callable[[str], Any] | None = None) -> None:
        if codec not in CODECS:
            raise ValueError(f"unknown codec {codec!r}")
        self.client = client
        self.base = base.rstrip("/")
        self.chunk_size = chunk_size
        self.codec = codec
        self._guard = guard or _no_guard
        self.rereads = 0  # heads read again because a newer commit replaced their chunks

    def head_path(self, name: str) -> str:
        _check_name(name)
        return f"{self.base}/state/{name}"

    def chunk_dir(self, name: str) -> str:
        _check_name(name)
        return f"{self.base}/chunks/{name}"

    def names(self) -> list[str]:
        with self._guard(f"listing states under {self.base}"):
            try:
                return sorted(self.client.get_children(f"{self.base}/state"))
            except NoNodeError:
                return []

    def get(self, name: str) -> tuple[bytes, int] | None:
        where = self.head_path(name)
        with self._guard(f"reading {where}"):
            for _ in range(READ_ATTEMPTS):
                try:
                    raw, stat = self.client.get(where)
                except NoNodeError:
                    return None
                header, inline = parse_head(where, raw)
                payload = inline if header.chunks == 0 else self._read_chunks(name, header)
                if payload is not None:
                    return decode_payload(where, header, payload), int(stat.version)
                self.rereads += 1
        raise UnavailableError(f"{where} changed {READ_ATTEMPTS} times while being read")

    def _read_chunks(self, name: str, header: StateHeader) -> bytes | None:
        parts = []
        for i in range(header.chunks):
            try:
                part, _ = self.client.get(f"{self.chunk_dir(name)}/{header.generation}-{i:05d}")
            except NoNodeError:
                return None  # a newer commit replaced this generation: read the head again
            parts.append(part)
        return b"".join(parts)

    def head_version(self, name: str) -> int | None:
        """The head's version whatever its content (to overwrite a corrupt state)."""
        with self._guard(f"reading {self.head_path(name)}"):
            stat = self.client.exists(self.head_path(name))
        return None if stat is None else int(stat.version)

    def put(self, name: str, data: bytes, expected_version: int | None,
            fence: str | None = None) -> int:
        """Write ``data`` if the head is at ``expected_version``; return the new version.

        ``fence`` is a znode that must still exist (the writer's leader lock):
        if it is gone, the write is refused with :class:`NotLeaderError`.
        """
        where = self.head_path(name)
        payload = CODECS[self.codec][0](data)
        generation = uuid.uuid4().hex
        chunks = [] if len(payload) <= self.chunk_size else [
            payload[i:i + self.chunk_size] for i in range(0, len(payload), self.chunk_size)]
        header = StateHeader(MAGIC, FORMAT, self.codec, len(data),
                             hashlib.sha256(data).hexdigest(), len(chunks), generation)
        head = header.encode() + (b"" if chunks else payload)
        chunk_paths = [f"{self.chunk_dir(name)}/{generation}-{i:05d}" for i in range(len(chunks))]
        with self._guard(f"writing {where}"):
            self.client.ensure_path(f"{self.base}/state")
            if chunks:
                self.client.ensure_path(self.chunk_dir(name))
                for path, part in zip(chunk_paths, chunks, strict=True):
                    self.client.create(path, part)
            try:
                version = self._commit(where, head, expected_version, chunk_paths, fence)
            except ConflictError:
                # refused for certain: our chunks are garbage. (After a lost
                # connection the commit may have gone through, so they stay;
                # the next write's sweep removes them if they are not current.)
                with suppress(KazooException):
                    self._delete_quietly(chunk_paths)
                raise
            self._sweep(name, keep=generation)
            return version

    def _commit(self, where: str, head: bytes, expected_version: int | None,
                chunk_paths: list[str], fence: str | None) -> int:
        txn = self.client.transaction()
        checks = [(p, "chunk") for p in chunk_paths] + ([(fence, "fence")] if fence else [])
        for path, _ in checks:
            txn.check(path, 0)
        if expected_version is None:
            txn.create(where, head)
        else:
            txn.set_data(where, head, version=expected_version)
        results = txn.commit()
        failures = [(i, r) for i, r in enumerate(results)
                    if isinstance(r, Exception) and not isinstance(r, RolledBackError)]
        if not failures:
            last = results[-1]
            return 0 if expected_version is None else int(last.version)
        index, error = failures[0]
        if index < len(checks) and checks[index][1] == "fence":
            raise NotLeaderError(f"not writing {where}: leadership lock {fence} is gone")
        if index < len(checks):
            raise ConflictError(f"{where}: a chunk of this write was removed by another "
                                "writer before the commit")
        if isinstance(error, NodeExistsError):
            raise ConflictError(f"{where} already exists (expected to create it)")
        if isinstance(error, BadVersionError | NoNodeError):
            raise ConflictError(f"{where} is no longer at version {expected_version}: "
                                "another writer saved it first; read it again")
        raise error

    def _sweep(self, name: str, keep: str) -> None:
        """Remove chunks of every other generation (replaced or abandoned writes).
        A concurrent writer's chunks removed here make its commit fail its chunk
        check, so it retries; it can never commit a head without its chunks."""
        try:
            children = self.client.get_children(self.chunk_dir(name))
        except NoNodeError:
            return
        self._delete_quietly([f"{self.chunk_dir(name)}/{c}" for c in children
                              if not c.startswith(keep + "-")])

    def _delete_quietly(self, paths: list[str]) -> None:
        for path in paths:
            with suppress(NoNodeError):
                self.client.delete(path)

    def delete(self, name: str) -> None:
        """Remove a state and its chunks (an operator's reset)."""
        with self._guard(f"deleting {self.head_path(name)}"):
            for path in (self.head_path(name), self.chunk_dir(name)):
                with suppress(NoNodeError):
                    self.client.delete(path, recursive=True)


def _check_name(name: str) -> None:
    if not name or "/" in name or name in (".", "..") or name.startswith("zookeeper"):
        raise ValueError(f"bad state name {name!r}")


@contextmanager
def _no_guard(_what: str) -> Iterator[None]:
    yield
