#!/usr/bin/env bash
# Every test: set-up, the wasm build of the core, then the whole workspace's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
printf '\n==> checking that the core compiles for wasm32\n'
cargo build --locked -p paragraf-core --target wasm32-unknown-unknown
printf '\n==> building the browser app (dist/, used by the end-to-end test in headless Chromium)\n'
scripts/web_build.sh
printf '\n==> running all tests\n'
cargo test --locked --workspace
