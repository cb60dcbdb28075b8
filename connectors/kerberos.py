"""Kerberos for the RM and JobHistory web services: SPNEGO from a keytab login.

With ``rm.auth.keytab`` the advisor logs itself in: MIT Kerberos (through
python-gssapi's credential store) gets the initial ticket from the keytab into a
private in-memory ticket cache (``MEMORY:``, nothing on disk, nothing shared with
other processes) and gets a new one by itself once half of a ticket's lifetime has
passed. Credentials are acquired again for every request (a look into the cache,
no KDC traffic unless a ticket is due), because one long-lived credential handle
is not refreshed past its first lifetimes (measured: "Ticket expired" after two
60 s lifetimes). No operator ``kinit``, no ``k5start`` and no subprocess.

Without a keytab the default credentials are used: the ticket cache in
``KRB5CCNAME`` (kept fresh by ``kinit``/``k5start``), or MIT's client keytab
``KRB5_CLIENT_KTNAME``. The KDC and realms are the system's (``/etc/krb5.conf``,
or ``KRB5_CONFIG``).

Every request carries a fresh SPNEGO token (``Authorization: Negotiate``): one
round trip, no 401 challenge, and a failed login is an :class:`KerberosError`
(reason ``auth``) saying why in one line, before anything is sent. ``gssapi``
(the ``kerberos`` extra) is imported only when Kerberos is configured.
"""

from __future__ import annotations

import base64
import itertools
import logging
import os
import struct
import threading
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import requests

from yarn_advisor.connectors.errors import AuthError, ConnectorError

log = logging.getLogger(__name__)

EXTRA = "auth.method 'kerberos' needs the optional extra: pip install 'yarn-advisor[kerberos]'"
SPNEGO_OID = "1.3.6.1.5.5.2"
_CCACHES = itertools.count(1)

# What MIT Kerberos says (the minor status), and what to do about it.
_HINTS = (
    ("Clock skew too great", "this machine's clock and the KDC's differ by more than the "
     "allowed skew (5 min by default): synchronise the clocks (NTP)"),
    ("Decrypt integrity check failed", "the keytab's key does not match the KDC's (the key "
     "was changed since the keytab was written): export the keytab again"),
    ("Preauthentication failed", "the keytab's key does not match the KDC's (the key was "
     "changed since the keytab was written), or the clocks differ"),
    ("Cannot contact any KDC", "check the KDC addresses in krb5.conf (KRB5_CONFIG) and "
     "that the KDC is reachable"),
    ("not found in Kerberos database", "the KDC does not know this principal"),
)


class KerberosError(AuthError):
    """The advisor could not authenticate itself: no request was sent."""

    def __init__(self, message: str) -> None:
        ConnectorError.__init__(self, message)
        self.status = 401
        self.url = ""
        self.body = message


def gssapi_module() -> ModuleType:
    """python-gssapi, or ConnectorError naming the extra to install."""
    try:
        import gssapi
    except ImportError as exc:
        raise ConnectorError(EXTRA) from exc
    return gssapi


class KerberosLogin:
    """The advisor's Kerberos identity: ``principal`` from ``keytab`` (renewed by the
    library), or the default credentials when ``keytab`` is None."""

    def __init__(self, principal: str | None = None, keytab: str | None = None) -> None:
        self._gss = gssapi_module()
        self.principal = principal
        self.keytab = keytab
        self._store: dict[str, str] | None = None
        if keytab:
            self._store = {"client_keytab": keytab, "ccache": _new_ccache()}
        self._lock = threading.Lock()  # one ticket cache: refresh it one thread at a time
        self._expires_in: int | None = None
        self.tickets = 0  # initial tickets this login has seen (first login and renewals)

    @property
    def who(self) -> str:
        return self.principal or "the default principal"

    def login(self) -> Any:
        """The advisor's credentials, logging in (or again) when due; KerberosError
        says why not (the keytab's key, an unknown principal, the clocks, the KDC)."""
        with self._lock:
            try:
                return self._credentials()
            except self._gss.exceptions.GSSError as exc:
                raise KerberosError(self.explain(exc)) from None

    def token(self, host: str) -> bytes:
        """A SPNEGO token for the web service ``HTTP@host``; KerberosError says why not."""
        gss = self._gss
        with self._lock:
            try:
                creds = self._credentials()
            except gss.exceptions.GSSError as exc:
                raise KerberosError(self.explain(exc)) from None
            try:
                target = gss.Name(f"HTTP@{host}", gss.NameType.hostbased_service)
                context = gss.SecurityContext(name=target, creds=creds, usage="initiate",
                                              mech=gss.OID.from_int_seq(SPNEGO_OID))
                token: bytes = context.step()
            except gss.exceptions.GSSError as exc:
                raise KerberosError(self.explain(exc, host)) from None
        return token

    def _credentials(self) -> Any:
        try:
            return self._acquire()
        except self._gss.exceptions.GSSError as exc:
            if self._store is None or "expired" not in _reason(exc):
                raise
        # The ticket held ran out and MIT could not renew it, without saying why (a
        # stale keytab, the KDC down, the clocks): log in afresh, into a new cache, so
        # that either the advisor is back or the KDC's own answer says what is wrong.
        self._store = {**self._store, "ccache": _new_ccache()}
        return self._acquire()

    def _acquire(self) -> Any:
        gss = self._gss
        name = (gss.Name(self.principal, gss.NameType.kerberos_principal)
                if self.principal else None)
        if self._store is None:
            creds = gss.Credentials(name=name, usage="initiate")
        else:
            creds = gss.Credentials(name=name, usage="initiate", store=self._store)
        self._note_ticket(creds.lifetime)
        return creds

    def _note_ticket(self, expires_in: int | None) -> None:
        """Log each new initial ticket once (its remaining lifetime went up)."""
        if expires_in is None:
            return
        if self._expires_in is None or expires_in > self._expires_in:
            self.tickets += 1
            log.info("kerberos: ticket for %s valid for %d s (login %d)",
                     self.who, expires_in, self.tickets)
        self._expires_in = expires_in

    def explain(self, exc: Any, host: str | None = None) -> str:
        """One line: who could not log in (or authenticate to what), MIT's reason, and
        what to do about it."""
        reason = _reason(exc)
        how = f"with keytab {shown(self.keytab)}" if self.keytab else "from the ticket cache"
        hint = next((h for key, h in _HINTS if key in reason), "")
        if "expired" in reason:
            hint = ("a ticket the KDC has just issued is already expired by this machine's "
                    "clock: the clocks differ (synchronise them, NTP)" if self.keytab else
                    "renew the ticket cache (kinit, k5start) or configure rm.auth.keytab")
        elif "No credentials cache found" in reason or "No Kerberos credentials" in reason:
            hint = ("the keytab holds no key for this principal" if self.keytab else
                    "run kinit, or configure rm.auth.keytab and rm.auth.principal")
        elif host and reason.startswith("Server ") and "not found" in reason:
            hint = (f"the KDC has no principal HTTP/{host}: address the service by the host "
                    "name its SPNEGO principal is for")
        what = f"cannot authenticate to HTTP/{host}" if host else "cannot log in"
        return f"kerberos: {self.who} {how} {what}: {reason}" + (f" ({hint})" if hint else "")


def _new_ccache() -> str:
    """A private in-memory ticket cache (a MEMORY: cache is seen by this process only)."""
    return f"MEMORY:yarn-advisor-{os.getpid()}-{next(_CCACHES)}"


def _reason(exc: Any) -> str:
    """MIT's own words for a GSSError: the minor (Kerberos) status, else the major one."""
    minor = [s for s in exc.get_all_statuses(exc.min_code, False) if s] if exc.min_code else []
    if minor and minor != ["Success"]:
        return "; ".join(minor)
    major = [s for s in exc.get_all_statuses(exc.maj_code, True) if s]
    return "; ".join(major) or " ".join(exc.gen_message().split())


class SpnegoAuth(requests.auth.AuthBase):
    """``requests`` auth: a fresh ``Authorization: Negotiate`` token on every request."""

    def __init__(self, login: KerberosLogin) -> None:
        self.login = login

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        host = urlsplit(request.url or "").hostname or ""
        token = self.login.token(host)
        request.headers["Authorization"] = "Negotiate " + base64.b64encode(token).decode()
        return request


# --- start-up checks -------------------------------------------------------------------

def keytab_principals(path: str | Path) -> list[str]:
    """The principals a keytab holds (MIT keytab format, version 0x502), in file order.

    ValueError if the file is not a keytab: MIT's own message for that case is "No
    credentials cache found", which would send an operator looking for a ticket cache.
    """
    data = Path(path).read_bytes()
    if data[:2] != b"\x05\x02":
        raise ValueError("not a keytab (MIT keytab version 0x502 expected)")
    found: list[str] = []
    pos = 2
    try:
        while pos + 4 <= len(data):
            (size,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if size <= 0:  # a hole left by a deleted entry
                pos += -size
                continue
            entry, pos = data[pos:pos + size], pos + size
            if len(entry) < size:
                raise struct.error(f"an entry of {size} bytes has {len(entry)}")
            (count,) = struct.unpack_from(">H", entry, 0)
            at = 2
            words: list[str] = []
            for _ in range(count + 1):  # the realm, then the name's components
                (n,) = struct.unpack_from(">H", entry, at)
                if at + 2 + n > size:
                    raise struct.error(f"a name of {n} bytes runs past its entry")
                words.append(entry[at + 2:at + 2 + n].decode())
                at += 2 + n
            name = f"{'/'.join(words[1:])}@{words[0]}"
            if name not in found:
                found.append(name)
    except (struct.error, UnicodeDecodeError) as exc:
        raise ValueError(f"not a keytab (an entry is cut short: {exc})") from None
    return found


def shown(keytab: str) -> str:
    """A keytab as outputs name it: its file name, not where it lies (a keytab's path
    is a secret's address, and logs, /healthz and the journal travel further than the
    host's files)."""
    name = os.path.basename(keytab.rstrip("/"))
    return name if name == keytab else f"***/{name}"


def login_problems(principal: str | None, keytab: str | None,
                   hosts: Iterable[str]) -> list[str]:
    """What stops the advisor from authenticating to the web services on ``hosts``,
    each problem one line naming the setting; empty when a token was made for each
    (a real exchange with the KDC: the initial ticket, then one per service)."""
    if keytab:
        if not (Path(keytab).is_file() and os.access(keytab, os.R_OK)):
            return [f"rm.auth.keytab: {shown(keytab)} is not a readable file"]
        try:
            held = keytab_principals(keytab)
        except (OSError, ValueError) as exc:
            return [f"rm.auth.keytab: {shown(keytab)}: {exc}"]
        if principal and not _held(principal, held):
            return [f"rm.auth.principal: {principal} has no key in {shown(keytab)} (it holds "
                    f"{', '.join(held) or 'nothing'})"]
    try:
        login = KerberosLogin(principal, keytab)
        login.login()
    except KerberosError as exc:
        return [f"rm.auth: {exc}"]
    except ConnectorError as exc:
        return [f"rm.auth.method kerberos: {exc}"]
    problems: list[str] = []
    for host in dict.fromkeys(hosts):
        try:
            login.token(host)
        except KerberosError as exc:
            problems.append(f"rm.auth: {exc}")
    return problems


def _held(principal: str, held: list[str]) -> bool:
    """``principal`` (with or without its realm) is one the keytab holds."""
    if "@" in principal:
        return principal in held
    return any(name.rsplit("@", 1)[0] == principal for name in held)
