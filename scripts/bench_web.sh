#!/usr/bin/env bash
# Benchmark (not a test): the browser app's cold start and per-strategy retrieval time next to native search.
# Builds the web app (scripts/web_build.sh), then runs the end-to-end latency scenario over a bundle folder in
# headless Chromium and prints the figures (cold start to the first hybrid result; median retrieval per strategy,
# browser vs native).
#
# usage: scripts/bench_web.sh [BUNDLE_FOLDER]   (default: out/bundles, the BGB bundles of the main job)
set -euo pipefail
cd "$(dirname "$0")/.."
bundles="$(realpath "${1:-out/bundles}")"
if [[ ! -f "$bundles/manifest.json" ]]; then
  echo "no manifest.json in $bundles: build bundles first (\`paragraf build --law BGB --out $bundles\`)" >&2
  exit 1
fi
scripts/web_build.sh
# --release: the native column must be release code (the test profile keeps overflow checks, which stop the
# int8 kernels from vectorising).
PARAGRAF_E2E_BUNDLES="$bundles" exec cargo test --release --locked -p paragraf --test integration -- \
  --exact web::browser_cold_start_and_retrieval_per_strategy --nocapture
