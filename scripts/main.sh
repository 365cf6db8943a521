#!/usr/bin/env bash
# The main job: set-up, then parse the BGB and show what Paragraf knows about it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
corpus="${PARAGRAF_CORPUS:-../shared/corpus}"
./target/debug/paragraf corpus stats BGB --corpus-dir "$corpus"
./target/debug/paragraf corpus show BGB "§ 535" --corpus-dir "$corpus"
