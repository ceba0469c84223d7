#!/usr/bin/env bash
# The whole suite, in two pytest runs side by side: the local-model tests (marker `llm`), which spend
# their minutes waiting on a one-thread model server, and everything else on the other core. Each run
# has its own temporary directory; the model run's report is printed after the main one. Fails when
# either run fails or collects nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON="${1:-.venv/bin/python}"

scratch="$(mktemp -d)"
llm_pid=
trap '[ -n "$llm_pid" ] && kill "$llm_pid" 2>/dev/null; rm -rf "$scratch"' EXIT

"$PYTHON" -m pytest -m llm -p no:cacheprovider --basetemp="$scratch/llm" >"$scratch/llm.log" 2>&1 &
llm_pid=$!

"$PYTHON" -m pytest -m "not llm"
main_status=$?

wait "$llm_pid"
llm_status=$?
llm_pid=
echo
echo "==================== the local-model tests (pytest -m llm, run beside the rest) ===================="
cat "$scratch/llm.log"

if [ "$main_status" -ne 0 ] || [ "$llm_status" -ne 0 ]; then
    echo "pytest failed: the rest exited $main_status, the local-model tests $llm_status" >&2
    exit 1
fi
