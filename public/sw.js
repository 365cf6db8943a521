// Paragraf's service worker: after the first visit the app and its bundles load with no network.
// Content-hashed files (Trunk's `name-<hash>.js/_bg.wasm/.css`, bundles `GG.law.<hash>.pgb`) never change, so they
// are served from the cache first; everything else (index.html, manifest.json, report.json) is fetched from the
// network first and falls back to the cache when offline. A new build brings new names, so nothing stale is served.
const CACHE = "paragraf-v1";
const HASHED = /[.-][0-9a-f]{16}(_bg)?\.(wasm|js|css|pgb)$/;

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return; // the query-embedding proxy is never cached
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
