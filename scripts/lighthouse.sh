#!/usr/bin/env bash
# Lighthouse 12.2.3 (pinned in scripts/lighthouse/, installed with `npm ci` on the first run) with the Debian
# Chromium, on the app as `paragraf serve` serves it: the search page with results, the strategies page and, when a
# folder of many laws is given, the page over all laws; mobile (Lighthouse's default emulation) and desktop. Each
# page and form runs RUNS times (default 3; Lighthouse's own advice, its scores vary from run to run); prints the
# median run's four category scores with the range of performance, and keeps the median run's report in
# target/lighthouse/ (and the lowest as NAME-FORM-lowest.json). A measurement, not a test.
#   [RUNS=n] scripts/lighthouse.sh [BUNDLES (default out/bundles)] [ALL_LAWS_BUNDLES]
set -euo pipefail
cd "$(dirname "$0")/.."
bundles="${1:-out/bundles}"
all_laws="${2:-}"
[ -f dist/index.html ] || { echo "no app in dist/: scripts/web_build.sh builds it" >&2; exit 1; }
[ -x target/debug/paragraf ] || { echo "no target/debug/paragraf: cargo build" >&2; exit 1; }
chromium=$(command -v chromium || true)
[ -n "$chromium" ] || { echo "no chromium: scripts/setup.sh installs it" >&2; exit 1; }
if ! [ scripts/lighthouse/node_modules/.installed -nt scripts/lighthouse/package-lock.json ]; then
  npm ci --prefix scripts/lighthouse --no-audit --no-fund
  touch scripts/lighthouse/node_modules/.installed
fi
out=target/lighthouse
mkdir -p "$out"
servers=()
trap 'for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
# Starts `paragraf serve` for a bundle folder (files only) and sets $url to its address.
serve() {
  local log="$out/serve-$RANDOM.log"
  : >"$log"
  ./target/debug/paragraf serve dist --bundles "$1" --no-proxy --bind 127.0.0.1:0 >"$log" 2>&1 &
  servers+=($!)
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on //p' "$log")
    [ -n "$url" ] && return
    sleep 0.1
  done
  echo "paragraf serve did not start:" >&2; cat "$log" >&2; exit 1
}
serve "$bundles"
law=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).laws[0].law)' "$bundles/manifest.json")
pages=("search:$url/?law=$law&mode=bm25&q=Kaution+nach+Auszug+zur%C3%BCck" "strategies:$url/?page=strategies")
if [ -n "$all_laws" ]; then
  serve "$all_laws"
  pages+=("all-laws:$url/?page=alle&mode=bm25&q=K%C3%BCndigung+Arbeitsverh%C3%A4ltnis")
fi
runs="${RUNS:-3}"
[[ "$runs" =~ ^[1-9][0-9]?$ ]] || { echo "RUNS must be a number from 1 to 99, not '$runs'" >&2; exit 1; }
printf '%-11s %-8s %20s %14s %15s %5s\n' page form "performance (range)" accessibility best-practices seo
for page in "${pages[@]}"; do
  name=${page%%:*}
  target=${page#*:}
  for form in mobile desktop; do
    preset=()
    [ "$form" = desktop ] && preset=(--preset=desktop)
    reports=()
    for run in $(seq "$runs"); do
      report="$out/$name-$form-$run.json"
      scripts/lighthouse/node_modules/.bin/lighthouse "$target" "${preset[@]}" --quiet \
        --chrome-path="$chromium" --chrome-flags="--headless=new --no-sandbox --disable-gpu" \
        --only-categories=performance,accessibility,best-practices,seo \
        --output=json --output-path="$report" >/dev/null 2>"$out/$name-$form.log" || {
          echo "lighthouse failed on $target ($form): see $out/$name-$form.log" >&2; exit 1; }
      reports+=("$report")
    done
    # The median run by performance is kept as $name-$form.json, the lowest (to see what held it down) as
    # $name-$form-lowest.json; the others are removed.
    node -e '
      const fs = require("fs");
      const [name, form, ...files] = process.argv.slice(1);
      const runs = files.map((f) => ({f, r: JSON.parse(fs.readFileSync(f))}));
      const perf = (x) => Math.round(x.r.categories.performance.score * 100);
      runs.sort((a, b) => perf(a) - perf(b));
      const median = runs[Math.floor((runs.length - 1) / 2)];
      const s = (k) => Math.round(median.r.categories[k].score * 100);
      const range = runs.length > 1 ? ` (${perf(runs[0])}–${perf(runs[runs.length - 1])})` : "";
      console.log(name.padEnd(11) + " " + form.padEnd(8) + " " + (String(s("performance")) + range).padStart(20) + " " +
        String(s("accessibility")).padStart(14) + " " + String(s("best-practices")).padStart(15) + " " +
        String(s("seo")).padStart(5));
      fs.renameSync(median.f, files[0].replace(/-1\.json$/, ".json"));
      if (runs[0] !== median) fs.renameSync(runs[0].f, files[0].replace(/-1\.json$/, "-lowest.json"));
      for (const x of runs.slice(1)) if (x !== median) fs.rmSync(x.f);
    ' "$name" "$form" "${reports[@]}"
  done
done
echo "reports: $out/"
