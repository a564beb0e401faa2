// Terminal tables, numbers, JSON and CSV output.

/** Where a table is printed: how wide the terminal is, and whether to colour it. */
export interface Terminal {
  /** The terminal's width in columns; undefined: not a terminal (no limit). */
  readonly columns: number | undefined;
  /** ANSI colour on. */
  readonly color: boolean;
}

/** A plain, unlimited output (a pipe, a file, JSON). */
export const PLAIN: Terminal = { columns: undefined, color: false };

/**
 * The terminal of an output stream: `$COLUMNS` (when a positive number) else the stream's width
 * when it is a TTY; colour when `FORCE_COLOR` is set (not `0`/`false`), else never with `NO_COLOR`
 * (any non-empty value) or `TERM=dumb`, else only on a TTY (https://no-color.org, Node's rules).
 */
export function terminalOf(env: NodeJS.ProcessEnv, stream: { isTTY?: boolean | undefined; columns?: number | undefined }): Terminal {
  const tty = stream.isTTY === true;
  const cols = Number(env.COLUMNS);
  const columns = env.COLUMNS !== undefined && Number.isInteger(cols) && cols > 0 ? cols : tty && stream.columns ? stream.columns : undefined;
  const force = env.FORCE_COLOR;
  const color = force !== undefined && force !== "0" && force !== "false" ? true : force === "0" || force === "false" ? false : env.NO_COLOR ? false : env.TERM === "dumb" ? false : tty;
  return { columns, color };
}

/** ANSI styles the tables use (applied only when the terminal has colour). */
export const STYLE = { head: "36", total: "33", dim: "2", good: "32", warn: "33" } as const;

/** `s` in the ANSI style `code` when colour is on. */
export function paint(t: Terminal, code: string, s: string): string {
  return t.color && s ? `\x1b[${code}m${s}\x1b[0m` : s;
}

/** How to fit and colour a table. */
export interface TableOptions {
  /** The terminal (width limit, colour). */
  readonly terminal?: Terminal | undefined;
  /** Columns that may be clipped (with an ellipsis) to fit the width: column index → narrowest width. */
  readonly shrink?: ReadonlyMap<number, number> | undefined;
  /** Columns clipped at their start (`…/lake/apps`: paths), not their end. */
  readonly clipStart?: ReadonlySet<number> | undefined;
  /** Per body row: a style for the whole row (e.g. STYLE.dim for a gap). */
  readonly rowStyle?: readonly (string | undefined)[] | undefined;
}

/** The width a table of these column widths takes on screen. */
function tableWidth(width: readonly number[]): number {
  return width.reduce((a, w) => a + w + 3, 1);
}

/**
 * Render a box-drawn table (like ccusage's); `right` marks right-aligned columns. With a terminal
 * width, the `shrink` columns are clipped (widest first, down to their narrowest) until the table
 * fits; with colour, the header is cyan and the footer yellow.
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[], right: readonly boolean[] = [], footer?: readonly string[], options: TableOptions = {}): string {
  const t = options.terminal ?? PLAIN;
  const all = footer ? [...rows, footer] : rows;
  const width = headers.map((h, i) => Math.max(strWidth(h), ...all.map((r) => strWidth(r[i] ?? ""))));
  if (t.columns !== undefined && options.shrink) {
    const floor = (i: number) => Math.max(options.shrink!.get(i)!, 1);
    while (tableWidth(width) > t.columns) {
      let at = -1;
      for (const i of options.shrink.keys()) if (width[i]! > floor(i) && (at < 0 || width[i]! > width[at]!)) at = i;
      if (at < 0) break;
      width[at]! -= 1;
    }
  }
  const fit = (s: string, i: number) => {
    const cs = [...s];
    const c = cs.length <= width[i]! ? s : options.clipStart?.has(i) ? "…" + cs.slice(cs.length - width[i]! + 1).join("") : cs.slice(0, width[i]! - 1).join("") + "…";
    const n = width[i]! - strWidth(c);
    return right[i] ? " ".repeat(n) + c : c + " ".repeat(n);
  };
  const line = (l: string, m: string, r: string) => l + width.map((w) => "─".repeat(w + 2)).join(m) + r;
  const row = (cells: readonly string[], style?: string) => "│" + cells.map((c, i) => ` ${style ? paint(t, style, fit(c, i)) : fit(c, i)} `).join("│") + "│";
  const out = [line("┌", "┬", "┐"), row(headers, STYLE.head), line("├", "┼", "┤"), ...rows.map((r, i) => row(r, options.rowStyle?.[i]))];
  if (footer) out.push(line("├", "┼", "┤"), row(footer, STYLE.total));
  out.push(line("└", "┴", "┘"));
  return out.join("\n");
}

/** Characters on screen (ANSI escapes take none). */
export function strWidth(s: string): number {
  return [...s.replace(/\x1b\[[0-9;]*m/g, "")].length;
}

/** A model id as the compact table shows it: without a `claude-` prefix or a date suffix (claude-sonnet-4-5-20250929 → sonnet-4-5). */
export function shortModel(m: string): string {
  return m.replace(/^(?:[\w.-]+\/)?(?:[a-z]{2}\.)?(?:anthropic\.)?claude-/, "").replace(/-\d{8}(?:-v\d+:\d+)?$/, "");
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

/** `$14.89`, `$14.89 + unpriced` (some tokens are not priced), `unpriced` (none is): the usage tables' and the web UI's cost. */
export function costCell(n: { readonly cost_usd: number | null; readonly unpriced_tokens: number }): string {
  if (n.cost_usd === null) return "unpriced";
  return n.unpriced_tokens > 0 ? `${fmtUsd(n.cost_usd)} + unpriced` : fmtUsd(n.cost_usd);
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
