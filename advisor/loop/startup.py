"""Checks made once at start-up, so a daemon that cannot run says why in one line.

The configuration's values are valid by then (the loader checked them); what is
checked here is the machine: the state directory and the journal can be
written, the TLS files exist, and with Kerberos the advisor can really log in
(the extra is installed, the keytab holds the principal's key, the KDC gives it
a ticket and a service ticket for each web service: a bad keytab, an unknown
principal or clocks too far apart are one line here, not a failed cycle later).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from urllib.parse import urlsplit

from yarn_advisor.advisor.act.actuator import journal_path
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.kerberos import login_problems


class StartupError(Exception):
    """The advisor cannot start; each problem names the setting and the path."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("cannot start:\n  " + "\n  ".join(problems))


def check(cfg: AdvisorConfig, writes_state: bool = True, live: bool = True) -> None:
    """Raise :class:`StartupError` listing every problem found (none: return).

    ``writes_state`` False skips ``state_dir`` and the journal; ``live`` False (a
    replay, which talks to no RM) skips the Kerberos login."""
    problems: list[str] = []
    if writes_state:
        problems += _directory("state_dir", Path(cfg.state_dir))
        journal = journal_path(cfg)
        if journal.is_dir():
            problems.append(f"actuator.journal_path: {journal} is a directory, not a file")
        else:
            problems += _directory("actuator.journal_path (its folder)", journal.parent)
        if cfg.classifier.enabled and cfg.classifier.checkpoint:
            ckpt = Path(cfg.classifier.checkpoint)
            if ckpt.is_dir():
                problems.append(f"classifier.checkpoint: {ckpt} is a directory, not a file")
    tls = cfg.rm.tls
    for key, value in (("ca_bundle", tls.ca_bundle), ("client_cert", tls.client_cert),
                       ("client_key", tls.client_key)):
        if value is not None and not (Path(value).is_file() and os.access(value, os.R_OK)):
            problems.append(f"rm.tls.{key}: {value} is not a readable file")
    if cfg.rm.auth.method == "kerberos":
        if importlib.util.find_spec("gssapi") is None:
            problems.append("rm.auth.method kerberos needs the optional extra: "
                            "pip install 'yarn-advisor[kerberos]'")
        elif live and not problems:  # a real login: only once the rest is in order
            problems += _kerberos(cfg)
    if problems:
        raise StartupError(problems)


def _kerberos(cfg: AdvisorConfig) -> list[str]:
    """Log in and get a service ticket for the web services of every configured RM
    and the JobHistoryServer (their HTTP/<host> principals)."""
    urls = [*cfg.rm.urls, *([cfg.rm.history_url] if cfg.rm.history_url else [])]
    hosts = [urlsplit(u).hostname or "" for u in urls]
    return login_problems(cfg.rm.auth.principal, cfg.rm.auth.keytab, hosts)


def _directory(key: str, path: Path) -> list[str]:
    """The directory exists (or can be made) and can be written."""
    if path.exists() and not path.is_dir():
        return [f"{key}: {path} exists and is not a directory"]
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return [f"{key}: cannot create {path}: {exc.strerror or exc}"]
    if not os.access(path, os.W_OK | os.X_OK):
        return [f"{key}: {path} is not writable"]
    return []
