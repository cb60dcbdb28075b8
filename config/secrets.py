"""Secrets in text: the one place their shapes are known, so every output hides them.

A URL's userinfo (``http://user:pass@rm:8088`` -> ``http://***@rm:8088``) is whatever
comes between ``://`` and the *last* ``@`` of the authority: a password with a raw
``@`` (``http://probe:p@55word@host``) is accepted by requests, and a pattern that
stopped at the first ``@`` left ``55word`` in logs, ``/healthz`` and the journal.
ZooKeeper's client library logs its requests at DEBUG: an ``Auth(...)`` request
carries the digest ``user:password`` and the session password is logged at its
lower level; both are masked in log lines (:func:`redact`).
"""

from __future__ import annotations

import re

# the authority ends at '/', '?', '#', whitespace or a JSON string's quote; the '@'
# matched is the last one before that end (the greedy run backtracks to it)
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#\s\"]*@")
_ZK_AUTH = re.compile(r"""(?P<key>\bauth=)(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|b'[^']*')""")
_ZK_SESSION = re.compile(r"(?P<key>session_passwd:\s*)\S+")


def redact_url(text: str) -> str:
    """``text`` with the userinfo of every URL in it replaced by ``***``."""
    return _USERINFO.sub(r"\g<scheme>***@", text)


def redact(text: str) -> str:
    """``text`` with every secret shape known here hidden (URL userinfo, ZooKeeper
    digests and session passwords as its client library logs them)."""
    text = redact_url(text)
    if "auth=" in text:
        text = _ZK_AUTH.sub(r"\g<key>'***'", text)
    if "session_passwd" in text:
        text = _ZK_SESSION.sub(r"\g<key>***", text)
    return text
