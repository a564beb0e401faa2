// Time zones and days for the usage reports: which IANA zone a report counts days in, a time's day
// in that zone, the --since/--until forms (yyyy-mm-dd, yyyymmdd, today, yesterday, 7d, 4w) and the
// start of a week. Only Intl (no library); the days themselves are zone.ts's.
import { ReaderError } from "./errors.js";
import { isUtcZone, localDay, validZone, wall } from "./zone.js";

export { isUtcZone, localDay };

const usage = (msg: string) => new ReaderError("Usage", msg);

/** The system's zone: `$TZ` of the environment given (a leading ":" dropped) when it names one, else the process's. */
export function systemTimeZone(env: NodeJS.ProcessEnv): string {
  const tz = env.TZ?.replace(/^:/, "");
  if (tz) {
    const z = validZone(tz);
    if (z) return z;
  }
  return Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC";
}

/** The zone a report counts in: `--timezone` (an IANA name, checked) or the system's. */
export function resolveTimeZone(v: string | undefined, env: NodeJS.ProcessEnv): string {
  if (v === undefined) return systemTimeZone(env);
  const z = validZone(v);
  if (!z) throw usage(`--timezone ${JSON.stringify(v)}: not an IANA time zone (e.g. UTC, Europe/Berlin, America/Los_Angeles)`);
  return z;
}

/** `yyyy-mm-dd HH:MM` of instant `t` (ms or ISO) in `zone`. */
export function localMinute(t: number | string, zone: string): string {
  const ms = typeof t === "number" ? t : Date.parse(t);
  const w = wall(ms, zone);
  return `${w.y}-${w.mo}-${w.d} ${w.h}:${w.mi}`;
}

/** `HH:MM` of instant `t` in `zone`. */
export function localClock(t: number | string, zone: string): string {
  return localMinute(t, zone).slice(11);
}

/** yyyy-mm-dd plus `n` days. */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/** The days a week may start on (`--start-of-week`), Sunday = 0 as Date#getUTCDay counts them. */
export const WEEK_DAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"] as const;
export type WeekDay = (typeof WEEK_DAYS)[number];

/** The first day (yyyy-mm-dd) of the week holding `day`, weeks starting on `start` (ISO weeks: monday); "unknown" stays. */
export function weekStart(day: string, start: WeekDay = "monday"): string {
  if (day === "unknown") return day;
  const dow = new Date(`${day}T00:00:00Z`).getUTCDay();
  return addDays(day, -((dow - WEEK_DAYS.indexOf(start) + 7) % 7));
}

/**
 * A --since/--until value as a day in `zone`: yyyy-mm-dd, yyyymmdd, `today`, `yesterday`, `Nd`
 * (N days before today) or `Nw` (N weeks before today). `now` is the time "today" is taken at.
 */
export function parseDayArg(flag: string, v: string | undefined, zone: string, now: number = Date.now()): string | undefined {
  if (v === undefined) return undefined;
  const today = localDay(new Date(now).toISOString(), zone);
  const s = v.trim().toLowerCase();
  if (s === "today") return today;
  if (s === "yesterday") return addDays(today, -1);
  const rel = /^(\d{1,5})([dw])$/.exec(s);
  if (rel) return addDays(today, -Number(rel[1]) * (rel[2] === "w" ? 7 : 1));
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(s);
  const d = m ? `${m[1]}-${m[2]}-${m[3]}` : "";
  if (!m || Number.isNaN(Date.parse(`${d}T00:00:00Z`)) || new Date(`${d}T00:00:00Z`).toISOString().slice(0, 10) !== d) {
    throw usage(`${flag} ${JSON.stringify(v)}: expected a date (yyyy-mm-dd or yyyymmdd), today, yesterday, Nd or Nw (N days or weeks before today)`);
  }
  return d;
}
