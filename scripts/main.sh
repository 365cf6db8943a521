#!/usr/bin/env bash
# The main job: set-up, the BGB bundles, the browser app, then serve both on http://127.0.0.1:8080 together with
# the query-embedding proxy. PARAGRAF_STRATEGIES picks the strategies (default: the three structural ones that
# retrieve best, ~5 minutes from a cold cache; `all` builds the 21 in about half an hour on 2 cores). Interrupted
# builds resume from the embedding cache.
# PARAGRAF_MODEL=embeddinggemma (or embeddinggemma@256) builds with EmbeddingGemma-300m instead of e5: better
# retrieval, a 1.15 GB download under the Gemma Terms of Use, and a much longer build (printed before it starts).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
corpus="${PARAGRAF_CORPUS:-../shared/corpus}"
strategies="${PARAGRAF_STRATEGIES:-section,subsection,sentence}"
port="${PARAGRAF_PORT:-8080}"
model="${PARAGRAF_MODEL:-e5}"

case "$model" in
  embeddinggemma*)
    printf '\n==> EmbeddingGemma-300m (%s): about 1.15 GB to download once (Gemma Terms of Use:\n' "$model"
    printf '    https://ai.google.dev/gemma/terms), 2.4 GB of temporary disk, and on 2 cores roughly 70 to 120 minutes\n'
    printf '    for the BGB section,subsection,sentence bundles (e5: ~5 minutes). Interrupted builds resume.\n'
    ./target/debug/paragraf model fetch embeddinggemma
    ;;
esac

printf '\n==> building the BGB bundles (%s, model %s) into out/bundles\n' "$strategies" "$model"
./target/debug/paragraf build --law BGB --corpus-dir "$corpus" --strategies "$strategies" --model "$model" --out out/bundles

printf '\n==> building the browser app into dist/\n'
scripts/web_build.sh
ln -sfn ../out/bundles dist/bundles

printf '\n==> serving http://127.0.0.1:%s (app + bundles) and the proxy on 127.0.0.1:8787; Ctrl-C stops both\n' "$port"
./target/debug/paragraf proxy --model "$model" --allow-origin "http://127.0.0.1:$port" --allow-origin "http://localhost:$port" &
proxy=$!
trap 'kill $proxy 2>/dev/null' EXIT
python3 -m http.server "$port" --bind 127.0.0.1 --directory dist
