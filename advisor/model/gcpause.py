"""A counted pause of the cyclic garbage collector around large allocations.

Decoding a large RM body, turning it into model objects and running the
policies allocate many small acyclic objects next to a large live Snapshot;
every full collection would walk all of it (about a quarter of the parse
time, and half the decide step at 10,000 nodes). Reference counting still
frees everything. Used by the connectors (decode, parse) and the engine.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_gc_lock = threading.Lock()
_gc_depth = 0
_gc_restore = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large body is decoded or
    turned into model objects (they hold no reference cycles, and each full
    collection over a freshly decoded body walks all of it: about a quarter of
    the parse time). Thread-safe and nestable: the pause is counted under a
    lock, and the collector's previous state comes back when the last pause
    ends, whatever the interleaving of the threads that took it."""
    global _gc_depth, _gc_restore
    with _gc_lock:
        if _gc_depth == 0:
            _gc_restore = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_restore:
                gc.enable()
