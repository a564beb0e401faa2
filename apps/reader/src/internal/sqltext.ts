// SQL text helpers shared by the read model and the usage scan (no DuckDB import here).

/** Quote a SQL string literal. */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** The first line of a message. */
export function firstLine(s: string): string {
  return s.split("\n")[0]!.trim();
}
