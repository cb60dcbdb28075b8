#!/usr/bin/env bash
# The README's run command: set up, then run the advisor in dry-run against the
# bundled recording of a real YARN cluster, printing each cycle and its
# recommendations and serving http://127.0.0.1:9135/metrics (Ctrl-C stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
YARN_ADVISOR_SETUP_JARS=0 bash .ci/setup
exec .venv/bin/yarn-advisor run --dry-run --replay examples/recordings/mini-hetero \
  --interval "${INTERVAL:-2}" --port "${PORT:-9135}" "$@"
