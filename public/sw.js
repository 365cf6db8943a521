// Paragraf's service worker: after the first visit the app and its bundles load with no network.
// Content-hashed files (Trunk's `name-<hash>.js/_bg.wasm/.css`, bundles `GG.law.<hash>.pgb`) never change, so they
// are served from the cache first; everything else (index.html, manifest.json, report.json) is fetched from the
// network first and falls back to the cache when offline. A new build brings new names, so nothing stale is served,
// and once a fresh index.html or manifest.json arrives, the hashed files of its folder that it no longer names are
// deleted, so the cache holds one build (the BGB's 21 bundles alone are ~100 MB) instead of every build ever seen.
const CACHE = "paragraf-v1";
// Trunk writes its hash without leading zeros (sometimes fewer than 16 digits); `content_hashed` in crates/proxy/src/site.rs
// decides the same for `paragraf serve`'s Cache-Control.
const HASHED = /[.-][0-9a-f]{8,16}(_bg)?\.(wasm|js|css|pgb)$/;
const PROXY_PATH = /\/(health|v1\/embed)$/;

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return; // the query-embedding proxy is never cached
  // Nor is it on the site's own origin (`paragraf serve`): its /health must say whether it is there now.
  if (PROXY_PATH.test(url.pathname)) return;
  if (HASHED.test(url.pathname)) {
    event.respondWith(
      caches.open(CACHE).then((cache) =>
        cache.match(request).then(
          (hit) =>
            hit ||
            fetch(request).then((response) => {
              if (response.ok) cache.put(request, response.clone());
              return response;
            })
        )
      )
    );
  } else {
    event.respondWith(
      fetch(request)
        .then((response) => {
          if (response.ok) {
            const copy = response.clone();
            caches.open(CACHE).then((cache) => cache.put(request, copy));
            if (request.mode === "navigate" || url.pathname.endsWith("/manifest.json")) {
              event.waitUntil(prune(url, response.clone()));
            }
          }
          return response;
        })
        .catch(() =>
          // Offline: the page itself under any query string (`?q=...` is app state), other files exactly.
          caches
            .match(request, { ignoreSearch: request.mode === "navigate" })
            .then((hit) => hit || Response.error())
        )
    );
  }
});

// Deletes cached hashed files in the folder of `url` that its fresh `response` (index.html names the app files,
// manifest.json the bundles) does not name any more.
async function prune(url, response) {
  const text = await response.text();
  const folder = url.pathname.slice(0, url.pathname.lastIndexOf("/") + 1);
  const bundles = url.pathname.endsWith("/manifest.json");
  const cache = await caches.open(CACHE);
  for (const cached of await cache.keys()) {
    const path = new URL(cached.url).pathname;
    const name = path.slice(folder.length);
    if (!path.startsWith(folder) || name.includes("/") || !HASHED.test(path)) continue;
    if (name.endsWith(".pgb") === bundles && !text.includes(name)) await cache.delete(cached);
  }
}
