"""The ``yarn-advisor`` command line.

Subcommands: ``run`` (the daemon; dry-run unless enforce is configured),
``record`` (capture real RM traffic), ``replay`` (offline cycles from a
recording), ``explain`` (why, for one target), ``rollback`` (undo what the
actuator did), ``classify-eval`` (the task classifier on traces), ``simulate``
(what-if runs on a simulated cluster, with and without the advisor).
Exit codes: 0 success, 1 runtime failure, 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from yarn_advisor import __version__
from yarn_advisor.advisor.act.actuator import journal_path
from yarn_advisor.advisor.cli import explain, rollback
from yarn_advisor.advisor.cli.logs import setup_logging
from yarn_advisor.advisor.engine.settings import load_config
from yarn_advisor.advisor.ha.coordinator import per_advisor_config, start_ha
from yarn_advisor.advisor.loop.daemon import Advisor
from yarn_advisor.advisor.loop.replaying import replay_advisor, replay_cycles, report_json
from yarn_advisor.advisor.loop.report import CycleReport
from yarn_advisor.advisor.loop.startup import StartupError, check
from yarn_advisor.advisor.loop.text import cycle_line, recommendation_line
from yarn_advisor.advisor.loop.wiring import build_live_advisor, build_sensor
from yarn_advisor.advisor.observe.server import AdvisorServer
from yarn_advisor.classifiers.evaluation import cli as classifiers_cli
from yarn_advisor.config.base import ConfigError
from yarn_advisor.config.schema import AdvisorConfig
from yarn_advisor.connectors.errors import one_line
from yarn_advisor.connectors.replay import CycleRecorder, Recording, RecordingError, open_recording

log = logging.getLogger("yarn_advisor")
SIMULATE_HELP = "what-if runs on a simulated YARN cluster"


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. A problem is one clear message and a non-zero exit: 2 for a
    bad configuration, recording or machine, 1 for anything else (``--debug``: the
    traceback instead)."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(simulator=_command(argv) == "simulate")
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except (ConfigError, RecordingError, StartupError) as exc:
        if args.debug:
            raise
        print(f"yarn-advisor: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"yarn-advisor: {args.command} failed: {type(exc).__name__}: {one_line(exc)} "
              "(--debug shows the traceback)", file=sys.stderr)
        return 1


def _command(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option)."""
    return next((a for a in argv if not a.startswith("-")), None)


def _at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low`` (argparse exits 2 otherwise)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value
    return parse


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, not {text}")
    return value


def _port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    value = _at_least(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be at most 65535, not {value}")
    return value


def build_parser(simulator: bool = False) -> argparse.ArgumentParser:
    """The command line; ``simulator`` adds ``simulate``'s own arguments, which import
    the simulator: only that subcommand loads it (the daemon never does)."""
    p = argparse.ArgumentParser(prog="yarn-advisor", description=__doc__.split("\n")[0])
    p.add_argument("--debug", action="store_true", help="show tracebacks (for bug reports)")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the advisor (dry-run by default)")
    run.add_argument("--config", type=Path, help="YAML configuration file")
    run.add_argument("--once", action="store_true", help="run one cycle and exit")
    run.add_argument("--dry-run", action="store_true", help="never write to the RM")
    run.add_argument("--replay", type=Path, metavar="DIR",
                     help="sense from a recording instead of a live RM")
    run.add_argument("--interval", type=_seconds, help="seconds between cycles")
    run.add_argument("--port", type=_port, help="HTTP port for /metrics (0: any free port)")
    run.set_defaults(handler=cmd_run)

    rec = sub.add_parser("record", help="record N real cycles of RM traffic")
    rec.add_argument("--rm", action="append", required=True, metavar="URL",
                     help="RM web address (repeat for RM HA)")
    rec.add_argument("--history", metavar="URL", help="JobHistoryServer web address")
    rec.add_argument("--out", type=Path, required=True, metavar="DIR")
    rec.add_argument("--cycles", type=_at_least(1), default=10)
    rec.add_argument("--interval", type=_seconds, default=10.0)
    rec.add_argument("--config", type=Path)
    rec.add_argument("--note", default="", help="how the recorded workload was made")
    rec.set_defaults(handler=cmd_record)

    rep = sub.add_parser("replay", help="replay a recording offline (dry-run)")
    rep.add_argument("recording", type=Path, metavar="DIR")
    rep.add_argument("--config", type=Path)
    rep.add_argument("--json", action="store_true", help="one JSON object per cycle")
    rep.set_defaults(handler=cmd_replay)

    explain.register(sub)
    rollback.register(sub)
    classifiers_cli.register(sub)
    if simulator:
        from yarn_advisor.simulator import cli as simulator_cli

        simulator_cli.register(sub)
    else:  # listed in --help; `yarn-advisor simulate ...` builds the parser above
        sub.add_parser("simulate", help=SIMULATE_HELP)
    return p


def cmd_run(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {}
    if args.dry_run:
        overrides["dry_run"] = True
    if args.interval is not None:
        overrides.setdefault("sense", {})["interval_s"] = args.interval
    if args.port is not None:
        overrides.setdefault("server", {})["port"] = args.port
    cfg = per_advisor_config(load_config(args.config, overrides))
    check(cfg, writes_state=not args.replay)
    setup_logging(cfg)
    if not cfg.dry_run and not args.replay:
        log.warning("ENFORCE mode: the actuator will write to the RM within its guardrails "
                    "(journal: %s)", journal_path(cfg))
    log.info("configuration %s: %s", cfg.fingerprint(), json.dumps(cfg.redacted(), sort_keys=True))
    recording = open_recording(args.replay) if args.replay else None
    advisor = replay_advisor(recording, cfg) if recording else build_live_advisor(cfg)
    server = None
    if cfg.server.enabled:
        try:
            server = AdvisorServer(advisor, cfg.server.host, cfg.server.port,
                                   cfg.sense.interval_s, cfg).start()
        except OSError as exc:
            raise StartupError([f"server: cannot listen on {cfg.server.host}:"
                                f"{cfg.server.port}: {exc.strerror or exc}"]) from None
        log.info("serving /metrics, /healthz, /recommendations on http://%s:%d",
                 cfg.server.host, server.port)
    ha = start_ha(cfg, advisor) if cfg.ha is not None else None
    advisor.ha = ha  # called around each cycle
    try:
        if recording is not None:
            _run_replay(advisor, recording, cfg, once=args.once)
        elif args.once or cfg.sense.interval_s == 0:
            report = advisor.run_once()
            _print_recommendations(report)
            return 0 if report.outcome == "ok" else 1
        else:
            advisor.run_forever(cfg.sense.interval_s)
    finally:
        if server:
            server.close()
        if ha:
            ha.stop()
    return 0


def _run_replay(advisor: Advisor, recording: Recording, cfg: AdvisorConfig, once: bool) -> None:
    """Play the recording's cycles at the configured pace, then keep serving."""
    advisor.install_signal_handlers()
    for report in replay_cycles(advisor, recording):
        _print_recommendations(report)
        if once or advisor.stopping:
            return
        time.sleep(min(cfg.sense.interval_s, 5.0))
    log.info("recording finished (%d cycles); still serving until interrupted",
             len(recording.cycles))
    while not advisor.stopping:
        time.sleep(0.2)


def _print_recommendations(report: CycleReport) -> None:
    for rec in report.recommendations:
        print(f"  {recommendation_line(rec)}", flush=True)


def cmd_record(args: argparse.Namespace) -> int:
    cfg = load_config(args.config, {"rm": {"urls": args.rm, "history_url": args.history}})
    check(cfg, writes_state=False)
    setup_logging(cfg)
    recorder = CycleRecorder(args.out)
    sensor = build_sensor(cfg, recorder)
    recorder.write_manifest(rm_urls=args.rm, history_url=args.history,
                            auth_user=cfg.rm.auth.user, auth_method=cfg.rm.auth.method,
                            cycles=args.cycles, interval_s=args.interval, note=args.note,
                            recorded_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    ok = done = 0
    try:
        for n in range(1, args.cycles + 1):
            started = time.monotonic()
            now_ms = int(time.time() * 1000)
            try:
                sensor.sense(now_ms)
                ok += 1
            except Exception as exc:  # a failed read is recorded too: replays see it fail
                log.warning("cycle %d: %s", n, exc)
            recorder.write_cycle(n, now_ms)
            done = n
            if n < args.cycles:
                time.sleep(max(0.0, args.interval - (time.monotonic() - started)))
    except KeyboardInterrupt:
        log.info("interrupted")
    print(f"recorded {done} cycles into {args.out} ({ok} sensed the cluster)")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    setup_logging(cfg)
    logging.getLogger("yarn_advisor").setLevel(logging.WARNING)  # stdout carries each cycle
    recording = open_recording(args.recording)
    advisor = replay_advisor(recording, cfg)
    for report in replay_cycles(advisor, recording):
        if args.json:
            print(json.dumps(report_json(report), sort_keys=True), flush=True)
        else:
            print(cycle_line(report))
            _print_recommendations(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
