#!/usr/bin/env bash
# The isolated environment for the real Matrix homeserver the delivery tests start: a venv in .matrix/
# with matrix-synapse (SQLite, loopback only). Kept out of the project's own environment because
# Synapse brings a large dependency tree (Twisted and friends) the product does not need.
# Idempotent: a second run only checks and exits.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.matrix
PINS=(matrix-synapse==1.163.2)
STAMP="$VENV/.installed"
PY="${MATRIX_PYTHON:-$(command -v python3.11 || command -v python3)}"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "${PINS[*]}" ] && [ -x "$VENV/bin/python" ]; then
    exit 0
fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q "${PINS[@]}"
"$VENV/bin/python" -c "import synapse.app.homeserver"
echo "${PINS[*]}" >"$STAMP"
