#!/usr/bin/env bash
# Parity of the Rust EmbeddingGemma encoder with the numpy reference (see gemma_parity.py for what is checked).
#
# usage: tests/parity/gemma_parity.sh [PARAGRAF_BINARY]
# env:   PARAGRAF_SHARED       shared data folder (default: ../shared beside the repository)
#        PARAGRAF_GEMMA_DIR    the model folder (default: fetched with `paragraf model fetch embeddinggemma`)
#        PARAGRAF_PARITY_VENV  reuse this venv (numpy, safetensors, tokenizers) instead of a throwaway one
#        PARAGRAF_PARITY_VECTORS  `all` compares every text's vector with the reference (default: a subset)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-$repo/target/release/paragraf}"
shared="${PARAGRAF_SHARED:-$repo/../shared}"

venv="${PARAGRAF_PARITY_VENV:-}"
if [[ -z "$venv" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  venv="$tmp/venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check numpy safetensors tokenizers
fi

dir="${PARAGRAF_GEMMA_DIR:-}"
if [[ -z "$dir" ]]; then
  dir="$("$bin" model fetch embeddinggemma --python "$venv/bin/python")"
fi

(cd "$repo" && cargo build --release --locked -p paragraf-embed --example gemma_embed)
exec "$venv/bin/python" "$here/gemma_parity.py" --model-dir "$dir" --embed "$repo/target/release/examples/gemma_embed" --shared "$shared" \
  --vectors "${PARAGRAF_PARITY_VECTORS:-subset}"
