// Terminal tables, numbers, JSON and CSV output.

/** Render a box-drawn table (like ccusage's); `right` marks right-aligned columns. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[], right: readonly boolean[] = [], footer?: readonly string[]): string {
  const all = footer ? [...rows, footer] : rows;
  const width = headers.map((h, i) => Math.max(strWidth(h), ...all.map((r) => strWidth(r[i] ?? ""))));
  const pad = (s: string, i: number) => {
    const n = width[i]! - strWidth(s);
    return right[i] ? " ".repeat(n) + s : s + " ".repeat(n);
  };
  const line = (l: string, m: string, r: string) => l + width.map((w) => "─".repeat(w + 2)).join(m) + r;
  const row = (cells: readonly string[]) => "│" + cells.map((c, i) => ` ${pad(c, i)} `).join("│") + "│";
  const out = [line("┌", "┬", "┐"), row(headers), line("├", "┼", "┤"), ...rows.map(row)];
  if (footer) out.push(line("├", "┼", "┤"), row(footer));
  out.push(line("└", "┴", "┘"));
  return out.join("\n");
}

function strWidth(s: string): number {
  return [...s].length;
}

/** 1234567 → "1,234,567"; null → "-". */
export function fmtInt(n: number | null | undefined): string {
  if (n === null || n === undefined) return "-";
  return Math.round(n).toLocaleString("en-US");
}

/** USD with two decimals; null → "unpriced". */
export function fmtUsd(n: number | null | undefined): string {
  if (n === null || n === undefined) return "unpriced";
  return "$" + n.toFixed(2);
}

/** JSON.stringify that writes Dates as ISO strings and BigInts as numbers when safe. */
export function toJson(v: unknown, indent = 2): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? (Number.isSafeInteger(Number(x)) ? Number(x) : x.toString()) : x), indent);
}

/** A value as text for a table or CSV cell. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (v instanceof Date) return v.toISOString();
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** Rows as RFC 4180 CSV with a header line. */
export function toCsv(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const esc = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const lines = [columns.map(esc).join(",")];
  for (const r of rows) lines.push(columns.map((c) => esc(cellText(r[c]))).join(","));
  return lines.join("\r\n") + "\r\n";
}

/** Truncate a string to `n` characters with an ellipsis. */
export function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}

/** A duration in seconds as `42s`, `7m05s` or `2h03m`. */
export function fmtDuration(s: number): string {
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
