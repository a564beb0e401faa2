// A time's day in an IANA zone: Intl only, no other import (the statusline loads it for
// --timezone without the command line; time.ts builds the report options on it).
/** Zone names whose offset is always zero: a UTC day is a day in them (usage rollups are summed per UTC day). */
const UTC_NAMES = new Set(["UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/GMT", "GMT", "Etc/GMT0", "GMT0", "Etc/GMT+0", "GMT+0", "Etc/GMT-0", "GMT-0", "Etc/Greenwich", "Greenwich", "Etc/Universal", "Universal", "Etc/Zulu", "Zulu"]);

/** Whether days in `zone` are UTC days. */
export function isUtcZone(zone: string): boolean {
  return UTC_NAMES.has(zone);
}

/** The canonical name of `zone`, or undefined when it names none. */
export function validZone(zone: string): string | undefined {
  // The common answer without Intl: its first zone lookup loads ICU's zone data (tens of ms).
  if (zone === "UTC") return zone;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();
function format(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
    formats.set(zone, f);
  }
  return f;
}

/** The wall-clock fields of instant `t` (ms) in `zone`. */
export function wall(t: number, zone: string): { y: string; mo: string; d: string; h: string; mi: string } {
  const p: Record<string, string> = {};
  for (const x of format(zone).formatToParts(t)) p[x.type] = x.value;
  return { y: p.year!, mo: p.month!, d: p.day!, h: p.hour!, mi: p.minute! };
}

// Offsets are whole multiples of 15 minutes and change only on such boundaries, so a day is the
// same for every instant of one 15-minute slot: cached per (zone, slot).
const SLOT = 15 * 60_000;
const dayCache = new Map<string, Map<number, string>>();

/** The day (yyyy-mm-dd) in `zone` of ISO time `ts`; `unknown` for a missing or unreadable time. */
export function localDay(ts: string | null | undefined, zone: string): string {
  if (!ts) return "unknown";
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return "unknown";
  if (isUtcZone(zone)) return new Date(t).toISOString().slice(0, 10);
  let c = dayCache.get(zone);
  if (!c) dayCache.set(zone, (c = new Map()));
  const slot = Math.floor(t / SLOT);
  let d = c.get(slot);
  if (d === undefined) {
    const w = wall(t, zone);
    c.set(slot, (d = `${w.y}-${w.mo}-${w.d}`));
  }
  return d;
}
