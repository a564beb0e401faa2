// A small history router: every page and its filters live in the URL, so any view can be shared.
import { useEffect, useState } from "preact/hooks";

/** The current location (path, query). */
export interface Route {
  readonly path: string;
  readonly query: URLSearchParams;
}

const listeners = new Set<() => void>();
const current = (): Route => ({ path: location.pathname, query: new URLSearchParams(location.search) });

/** Go to `href` (a same-origin path with query); `replace` keeps the history entry. */
export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  for (const l of listeners) l();
  if (!replace) window.scrollTo(0, 0);
}

/** Change some query parameters of the current page (empty values are removed). */
export function setQuery(changes: Record<string, string | undefined>, replace = true): void {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === "") q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  navigate(location.pathname + (s ? `?${s}` : ""), replace);
}

/** The current route; re-renders on navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => setRoute(current());
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return route;
}

/** Follow same-origin links without a page load (modified clicks keep the browser's behaviour). */
export function interceptLinks(): void {
  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.("a");
    if (!a || a.target || a.hasAttribute("download")) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || url.pathname.startsWith("/api/")) return;
    e.preventDefault();
    // The zone the reader picked goes along to the next page.
    const tz = new URLSearchParams(location.search).get("tz");
    if (tz && !url.searchParams.has("tz")) url.searchParams.set("tz", tz);
    navigate(url.pathname + url.search);
  });
}
