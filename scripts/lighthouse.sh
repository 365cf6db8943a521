#!/usr/bin/env bash
# Lighthouse 12.2.3 (pinned in scripts/lighthouse/, installed with `npm ci` on the first run) with the Debian
# Chromium, on the app as `paragraf serve` serves it: the search page with results, the strategies page and, when a
# folder of many laws is given, the page over all laws; mobile (Lighthouse's default emulation) and desktop. Prints
# the four category scores per page and keeps the reports in target/lighthouse/. A measurement, not a test.
#   scripts/lighthouse.sh [BUNDLES (default out/bundles)] [ALL_LAWS_BUNDLES]
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
printf '%-11s %-8s %12s %14s %15s %5s\n' page form performance accessibility best-practices seo
for page in "${pages[@]}"; do
  name=${page%%:*}
  target=${page#*:}
  for form in mobile desktop; do
    preset=()
    [ "$form" = desktop ] && preset=(--preset=desktop)
    report="$out/$name-$form.json"
    scripts/lighthouse/node_modules/.bin/lighthouse "$target" "${preset[@]}" --quiet \
      --chrome-path="$chromium" --chrome-flags="--headless=new --no-sandbox --disable-gpu" \
      --only-categories=performance,accessibility,best-practices,seo \
      --output=json --output-path="$report" >/dev/null 2>"$out/$name-$form.log" || {
        echo "lighthouse failed on $target ($form): see $out/$name-$form.log" >&2; exit 1; }
    node -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1]));
      const s = (k) => Math.round(r.categories[k].score * 100);
      console.log(process.argv[2].padEnd(11) + " " + process.argv[3].padEnd(8) + " " +
        String(s("performance")).padStart(12) + " " + String(s("accessibility")).padStart(14) + " " +
        String(s("best-practices")).padStart(15) + " " + String(s("seo")).padStart(5));
    ' "$report" "$name" "$form"
  done
done
echo "reports: $out/"
