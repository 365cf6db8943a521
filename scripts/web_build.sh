#!/usr/bin/env bash
# Builds the browser app into dist/ (release, wasm-release profile, wasm-opt -Oz) and prints the size budget:
# the wasm + JS the browser downloads, raw and gzip -9 compressed (goal: under 800 KB compressed).
#   scripts/web_build.sh [--public-url /<repo>/]
set -euo pipefail
cd "$(dirname "$0")/.."
trunk build --release "$@"
wasm=$(ls dist/*_bg.wasm)
js=$(ls dist/paragraf-web-*.js)
raw=$(cat "$wasm" "$js" | wc -c)
gz=$( (gzip -9 -c "$wasm"; gzip -9 -c "$js") | wc -c)
printf 'web app: %s + %s\n  raw %d bytes, gzip -9 %d bytes (%.0f KB; budget 800 KB)\n' \
  "$(basename "$wasm")" "$(basename "$js")" "$raw" "$gz" "$(awk "BEGIN { print $gz / 1000 }")"
if [ "$gz" -ge 800000 ]; then
  echo "the compressed app is over the 800 KB budget" >&2
  exit 1
fi
