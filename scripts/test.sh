#!/usr/bin/env bash
# Every check CI gates on: formatting, lints and docs with warnings denied, set-up, the wasm build of the IO-free crates,
# the browser app, then the whole workspace's tests.
#
# Lints run twice: on the host for every crate and target (tests, benches and examples included; the web crate's
# platform-free logic and its tests compile natively), and for wasm32 on the browser crates (app and worker), because their
# wasm code is `#[cfg(target_arch = "wasm32")]` and a host run would never see it. Docs are built on the host
# (`--no-deps`: our crates only), which covers every public API the native tools and IO-free crates export.
set -euo pipefail
cd "$(dirname "$0")/.."

for component in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$component"; then
    rustup component add "$component"
  fi
done

printf '\n==> checking formatting (cargo fmt --check)\n'
cargo fmt --all --check

scripts/setup.sh

printf '\n==> lints, warnings denied (host: every crate and target; wasm32: the browser app and its worker)\n'
cargo clippy --locked --workspace --all-targets -- -D warnings
cargo clippy --locked -p paragraf-web -p paragraf-worker --target wasm32-unknown-unknown -- -D warnings

printf '\n==> API docs, warnings denied\n'
RUSTDOCFLAGS='-D warnings' cargo doc --locked --no-deps --workspace

printf '\n==> checking that the IO-free crates compile for wasm32\n'
cargo build --locked -p paragraf-law -p paragraf-format -p paragraf-stats -p paragraf-e5 -p paragraf-index -p paragraf-engine -p paragraf-core \
    -p paragraf-eval --target wasm32-unknown-unknown
printf '\n==> building the browser app (dist/, used by the end-to-end test in headless Chromium)\n'
scripts/web_build.sh
printf '\n==> running all tests\n'
cargo test --locked --workspace
