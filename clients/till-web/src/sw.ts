// The till's service worker: keeps the app's shell (the page, its script, its style, its
// manifest and icons) so that the till opens and sells with the server unreachable. The API
// (/v1) is never cached here: the store's selling data lives in IndexedDB (OfflineStore) and
// the sales waiting to be sent in the outbox.
//
// The build writes the list of files with their content digest into SHELL and VERSION, so a
// new build is a new service worker, which replaces the previous cache once installed.

export {};
declare const self: ServiceWorkerGlobalScope;
declare const SHELL: string[];
declare const VERSION: string;

const CACHE = `till-shell-${VERSION}`;
const PAGE = "/till";

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL.map((path) => new Request(path, { cache: "reload" }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key.startsWith("till-shell-") && key !== CACHE).map((key) => caches.delete(key))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/v1/")) return; // the API: always the network
  if (request.mode === "navigate" && (url.pathname === PAGE || url.pathname === `${PAGE}/`)) {
    // The page: the network first (a new version), the cached one when the server is away.
    event.respondWith(
      fetch(request).catch(async () => (await caches.match(PAGE, { ignoreSearch: true })) ?? Response.error()),
    );
    return;
  }
  if (!url.pathname.startsWith(`${PAGE}/`)) return;
  // The shell's files: the cached copy of this version, else the network.
  event.respondWith(
    caches.match(request).then((cached) => cached ?? fetch(request)),
  );
});
