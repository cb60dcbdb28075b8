"""The advisor daemon for the kill -9 test: ``run_forever`` on a configuration, in
enforce mode, every cycle writing (see chaos_rigs). One log line per cycle on stderr.

    python tests/chaos/chaos_daemon.py CONFIG INTERVAL_S
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "minicluster")]

from chaos_rigs import install_writing_decide  # noqa: E402

from yarn_advisor.advisor.engine.settings import load_config  # noqa: E402
from yarn_advisor.advisor.loop.wiring import build_live_advisor  # noqa: E402


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(created).3f %(name)s %(message)s")
    install_writing_decide()
    advisor = build_live_advisor(load_config(Path(sys.argv[1])))
    advisor.run_forever(float(sys.argv[2]))


if __name__ == "__main__":
    main()
