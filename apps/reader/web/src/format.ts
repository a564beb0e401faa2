// Numbers, money, times and durations as the pages show them. Times and days are in the page's zone
// (?tz=, else the server's: serve --timezone, else its system's), as the usage commands count them.
export { costCell as fmtCost } from "../../src/internal/format.js";

export const fmtInt = (n: number | null | undefined): string => (n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en-US"));

/** The server's zone, named by the page's `<meta name="lake-timezone">`. */
export function serverZone(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="lake-timezone"]')?.content || "UTC";
}

const formats = new Map<string, Intl.DateTimeFormat | null>();
function formatIn(zone: string): Intl.DateTimeFormat | null {
  let f = formats.get(zone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
    } catch {
      f = null; // not a zone this browser knows
    }
    formats.set(zone, f);
  }
  return f;
}

/** The zone the pages count days and show times in: `?tz=` when it names a zone, else the server's. */
export function pageZone(search: string = location.search): string {
  const tz = new URLSearchParams(search).get("tz");
  return tz && formatIn(tz) ? tz : serverZone();
}

/** "2026-02-03 14:05:09" of an instant in `zone`. */
function wall(t: number, zone: string): string {
  const p: Record<string, string> = {};
  for (const x of (formatIn(zone) ?? formatIn("UTC")!).formatToParts(t)) p[x.type] = x.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

const instant = (iso: string): number | undefined => {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
};

/** 1234567 → "1.23M". */
export function fmtCompact(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return fmtInt(n);
}

/** "2026-02-03 14:05" in the page's zone. */
export function fmtTime(iso: string | null | undefined): string {
  const t = iso ? instant(iso) : undefined;
  return t === undefined ? "–" : wall(t, pageZone()).slice(0, 16);
}

/** "14:05:09" in the page's zone. */
export function fmtClock(iso: string | null | undefined): string {
  const t = iso ? instant(iso) : undefined;
  return t === undefined ? "" : wall(t, pageZone()).slice(11);
}

/** yyyy-mm-dd of an instant in the page's zone. */
export const zoneDay = (t: Date | string): string => wall(typeof t === "string" ? Date.parse(t) : t.getTime(), pageZone()).slice(0, 10);

export function fmtDuration(s: number | null | undefined): string {
  if (s === null || s === undefined) return "–";
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(Math.round(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** "3m ago", "2h ago" from an ISO time. */
export function fmtAge(iso: string, now = Date.now()): string {
  const s = Math.max(0, (now - Date.parse(iso)) / 1000);
  if (s < 90) return `${Math.round(s)}s ago`;
  if (s < 5400) return `${Math.round(s / 60)}m ago`;
  if (s < 129600) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

/** yyyy-mm-dd plus n days. */
export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** A short session id (the CLI accepts a unique prefix). */
export const shortId = (id: string): string => (id.length > 13 ? id.slice(0, 8) : id);
