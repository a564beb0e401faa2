// Fetching the JSON API (same-origin; the token, when the server has one, travels as its cookie).
import { useEffect, useState } from "preact/hooks";

/** An API answer being loaded. */
export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: string | undefined;
  readonly loading: boolean;
}

/** GET an API path and parse its JSON; an error answer becomes an Error with the server's message. */
export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: "application/json" } });
  const body = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
  if (!res.ok) throw new Error(body?.error?.message ?? `${res.status} ${res.statusText}`);
  return body as T;
}

/** Load `path` (re-loaded when it changes; undefined loads nothing). */
export function useApi<T>(path: string | undefined): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ data: undefined, error: undefined, loading: path !== undefined });
  useEffect(() => {
    if (path === undefined) {
      setState({ data: undefined, error: undefined, loading: false });
      return;
    }
    let live = true;
    setState((s) => ({ data: s.data, error: undefined, loading: true }));
    getJson<T>(path).then(
      (data) => live && setState({ data, error: undefined, loading: false }),
      (e: unknown) => live && setState({ data: undefined, error: e instanceof Error ? e.message : String(e), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [path]);
  return state;
}

/** A query string from a record (empty values left out; arrays repeat the key). */
export function qs(params: Record<string, string | readonly string[] | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    if (typeof v === "string") q.set(k, v);
    else for (const x of v) q.append(k, x);
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}
