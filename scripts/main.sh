#!/usr/bin/env bash
# The main job: set-up, the BGB bundles, the browser app, then `paragraf serve` on http://127.0.0.1:8080: the app,
# the bundles and the query-embedding endpoint on one origin.
# PARAGRAF_STRATEGIES picks the strategies (default: the three structural ones that
# retrieve best, ~5 minutes from a cold cache; `all` builds the 21 in about half an hour on 2 cores). Interrupted
# builds resume from the embedding cache.
# PARAGRAF_MODEL=embeddinggemma (or embeddinggemma@256) builds with EmbeddingGemma-300m instead of e5: better
# retrieval, a 1.15 GB download under the Gemma Terms of Use, and a much longer build (printed before it starts).
# PARAGRAF_LAWS=all builds every federal law from the shared archive (or a list `StVO 2013,KSchG`, or @FILE)
# instead of the BGB, with the `section` strategy unless PARAGRAF_STRATEGIES says otherwise (cost printed first);
# PARAGRAF_STRATEGIES=none builds them without vectors (BM25 only) in about 5 minutes.
# With the BGB, the ranking learns from ../shared/eval/gerlayqa/bgb_dev.json when it is there (PARAGRAF_LEARN_FROM),
# and a quick evaluation on the project's own lay questions gives the Strategien page its figures.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
corpus="${PARAGRAF_CORPUS:-../shared/corpus}"
laws="${PARAGRAF_LAWS:-}"
if [[ -n "$laws" ]]; then
  strategies="${PARAGRAF_STRATEGIES:-section}"
else
  strategies="${PARAGRAF_STRATEGIES:-section,subsection,sentence}"
fi
port="${PARAGRAF_PORT:-8080}"
model="${PARAGRAF_MODEL:-e5}"

case "$model" in
  embeddinggemma*)
    printf '\n==> EmbeddingGemma-300m (%s): about 1.15 GB to download once (Gemma Terms of Use:\n' "$model"
    printf '    https://ai.google.dev/gemma/terms), 2.4 GB of temporary disk, and on 2 cores about 20 minutes for the\n'
    printf '    BGB section,subsection,sentence bundles (measured 18 min 43 s; e5: ~5 minutes). Interrupted builds resume.\n'
    ./target/debug/paragraf model fetch embeddinggemma
    ;;
esac

# Learning from labelled lay questions (`paragraf build --learn-from`, i.e. `paragraf learn` after the build):
# GerLayQA's dev split when it is there. What is learned inherits GerLayQA's licence (non-commercial research
# only): it stays in out/bundles, for local research use. PARAGRAF_LEARN_FROM names another question file;
# PARAGRAF_LEARN_FROM= (empty) turns learning off. The project's own lay questions guard it: per strategy and mode
# the learned signals are shrunk until those questions rank no worse than without learning (--learn-guard). Across
# all laws the learned signals' routing weights are also fit on the project's own cross-law tuning questions
# (--learn-across).
learn_from="${PARAGRAF_LEARN_FROM-../shared/eval/gerlayqa/bgb_dev.json}"
learn=()
if [[ -n "$learn_from" && -f "$learn_from" && ( -z "$laws" || "$laws" == all ) ]]; then
  printf '\n==> learning from %s after the build (GerLayQA: non-commercial research use only; kept local in\n' "$learn_from"
  printf '    out/bundles): which sections lay people ask about, similar past questions, ranking weights; 5-fold\n'
  printf '    cross-validated first (measured 3 min 48 s for three strategies on 2 cores, release build, question vectors\n'
  printf '    cached; the first run also embeds the 2,154 questions; across all laws 3 min 11 s more). PARAGRAF_LEARN_FROM= skips it.\n'
  learn=(--learn-from "$learn_from")
  guard=tests/data/lay-questions-bgb.json
  [[ "$(realpath "$learn_from")" != "$(realpath "$guard")" ]] && learn+=(--learn-guard "$guard")
  [[ -n "$laws" ]] && learn+=(--learn-across tests/data/lay-questions-federal-tune.json)
else
  printf '\n==> no labelled questions at %s (or a list of laws without the BGB): the app ranks without learning\n' "${learn_from:-(PARAGRAF_LEARN_FROM empty)}"
fi

if [[ -n "$laws" ]]; then
  if [[ "$laws" == all && "$strategies" == none ]]; then
    printf '\n==> all 6,877 federal laws without vectors (BM25 only): measured 4 min 51 s on 2 cores, 2.6 GB of memory,\n'
    printf '    260 MB of files.\n'
  elif [[ "$laws" == all ]]; then
    printf '\n==> all 6,877 federal laws (%s, model %s): measured for `section` with e5: 37.1 M tokens, about 5 hours\n' "$strategies" "$model"
    printf '    of both cores at 2,100 tokens/s, 2.7 GB of memory, 296 MB of files; many more hours with EmbeddingGemma\n'
    printf '    or more strategies. PARAGRAF_STRATEGIES=none builds\n'
    printf '    all laws without vectors (BM25 only) in about 5 minutes. Incremental: unchanged laws are skipped, a\n'
    printf '    killed build resumes from the embedding cache.\n'
  fi
  printf '\n==> building the laws %s (%s, model %s) into out/bundles\n' "$laws" "$strategies" "$model"
  ./target/debug/paragraf build --laws "$laws" --from "${PARAGRAF_ARCHIVE:-$corpus/gii-federal-2026-04.tar.xz}" --strategies "$strategies" --model "$model" --out out/bundles "${learn[@]}"
else
  printf '\n==> building the BGB bundles (%s, model %s) into out/bundles\n' "$strategies" "$model"
  ./target/debug/paragraf build --law BGB --corpus-dir "$corpus" --strategies "$strategies" --model "$model" --out out/bundles "${learn[@]}"
  # The Strategien page charts out/bundles/report/report.json: the project's own lay questions (written for
  # Paragraf and committed with it) give it figures in seconds. docs/evaluation.md has the full protocol.
  printf '\n==> a quick evaluation on the project'"'"'s own 66 lay questions (seconds), for the Strategien page\n'
  ./target/debug/paragraf eval --questions tests/data/lay-questions-bgb.json --bundles out/bundles
fi

printf '\n==> building the browser app into dist/\n'
scripts/web_build.sh

# One origin for the app, the bundles (at /bundles/) and the query embeddings of the bundles' model (none for
# BM25-only bundles): no CORS set-up, and the app finds its proxy in the index.html it is served.
printf '\n==> serving http://127.0.0.1:%s (app, bundles, query embeddings); Ctrl-C stops it\n' "$port"
exec ./target/debug/paragraf serve dist --bundles out/bundles --bind "127.0.0.1:$port"
