// Numbers, money, times and durations as the pages show them (times in UTC, like the CLI).

export const fmtInt = (n: number | null | undefined): string => (n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en-US"));

export const fmtUsd = (n: number | null | undefined): string => (n === null || n === undefined ? "unpriced" : `$${n.toFixed(2)}`);

/** 1234567 → "1.23M". */
export function fmtCompact(n: number | null | undefined): string {
  if (n === null || n === undefined) return "–";
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return fmtInt(n);
}

/** "2026-02-03 14:05" (UTC). */
export const fmtTime = (iso: string | null | undefined): string => (iso ? iso.slice(0, 16).replace("T", " ") : "–");

/** "14:05:09" (UTC). */
export const fmtClock = (iso: string | null | undefined): string => (iso ? iso.slice(11, 19) : "");

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

/** yyyy-mm-dd of a Date in UTC. */
export const utcDay = (d: Date): string => d.toISOString().slice(0, 10);

/** yyyy-mm-dd plus n days. */
export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return utcDay(d);
}

/** A short session id (the CLI accepts a unique prefix). */
export const shortId = (id: string): string => (id.length > 13 ? id.slice(0, 8) : id);
