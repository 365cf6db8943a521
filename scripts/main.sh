#!/usr/bin/env bash
# The main job: set-up, the BGB bundles, the browser app, then serve both on http://127.0.0.1:8080 together with
# the query-embedding proxy. PARAGRAF_STRATEGIES picks the strategies (default: the three structural ones that
# retrieve best, ~5 minutes from a cold cache; `all` builds the 21 in about half an hour on 2 cores). Interrupted
# builds resume from the embedding cache.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
corpus="${PARAGRAF_CORPUS:-../shared/corpus}"
strategies="${PARAGRAF_STRATEGIES:-section,subsection,sentence}"
port="${PARAGRAF_PORT:-8080}"

printf '\n==> building the BGB bundles (%s) into out/bundles\n' "$strategies"
./target/debug/paragraf build --law BGB --corpus-dir "$corpus" --strategies "$strategies" --out out/bundles

printf '\n==> building the browser app into dist/\n'
scripts/web_build.sh
ln -sfn ../out/bundles dist/bundles

printf '\n==> serving http://127.0.0.1:%s (app + bundles) and the proxy on 127.0.0.1:8787; Ctrl-C stops both\n' "$port"
./target/debug/paragraf proxy --allow-origin "http://127.0.0.1:$port" --allow-origin "http://localhost:$port" &
proxy=$!
trap 'kill $proxy 2>/dev/null' EXIT
python3 -m http.server "$port" --bind 127.0.0.1 --directory dist
