#!/usr/bin/env bash
# Builds the browser app into dist/ (release, wasm-release profile, wasm-opt -Oz), rasterises the app icon
# (public/icon.svg) into the PNG sizes the web app manifest lists, and prints the size budget:
# the wasm + JS the browser downloads, raw and gzip -9 compressed (goal: under 800 KB compressed), and the size of
# the query-encoder worker (its model file is listed by `paragraf build`).
#   scripts/web_build.sh [--public-url /<repo>/]
set -euo pipefail
cd "$(dirname "$0")/.."
trunk build --release "$@"
# The installed app's icons, drawn by the same headless Chromium the browser tests use (one SVG, no image tools).
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "no Chromium to draw the app icons from public/icon.svg: scripts/setup.sh installs it" >&2
  exit 1
fi
for size in 192 512; do
  rm -f "dist/icon-$size.png"
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --default-background-color=00000000 \
    --window-size="$size,$size" --screenshot="dist/icon-$size.png" "file://$PWD/public/icon.svg" >/dev/null 2>&1
  [ -s "dist/icon-$size.png" ] || { echo "Chromium did not draw dist/icon-$size.png" >&2; exit 1; }
done
wasm=$(ls dist/paragraf-web-*_bg.wasm)
js=$(ls dist/paragraf-web-*.js)
raw=$(cat "$wasm" "$js" | wc -c)
gz=$( (gzip -9 -c "$wasm"; gzip -9 -c "$js") | wc -c)
printf 'web app: %s + %s\n  raw %d bytes, gzip -9 %d bytes (%.0f KB; budget 800 KB)\n' \
  "$(basename "$wasm")" "$(basename "$js")" "$raw" "$gz" "$(awk "BEGIN { print $gz / 1000 }")"
worker=$( (gzip -9 -c dist/paragraf-encoder_bg.wasm; gzip -9 -c dist/paragraf-encoder.js) | wc -c)
printf 'query-encoder worker (loaded only for search without a server): gzip -9 %d bytes\n' "$worker"
if [ "$gz" -ge 800000 ]; then
  echo "the compressed app is over the 800 KB budget" >&2
  exit 1
fi
