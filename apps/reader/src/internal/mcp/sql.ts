// The `sql` tool: one SELECT over the read model, on a DuckDB connection that can read only the
// fleet's files and write nothing. The views are built first; then external access is turned off
// with exactly the files the views read allowed (`allowed_paths`), and the configuration is locked,
// so no statement can turn it back on. Only a single SELECT statement runs (COPY, ATTACH, CREATE,
// SET, PRAGMA … are refused before they run), and at most offset + limit + 1 rows are read.
import { duckdb } from "@lake/segments";
import { fleetFiles, type Locations } from "../context.js";
import { ReaderError } from "../errors.js";
import { toJson } from "../format.js";
import { ReadModel, firstLine, jsValue, sqlString } from "../readmodel.js";
import { existsSync } from "node:fs";

/** Longest a query may run before it is interrupted (ms). */
export const SQL_TIMEOUT_MS = 60_000;

/** What a sql page holds. */
export interface SqlRows {
  readonly columns: string[];
  /** Rows offset … offset + want - 1 (fewer at the end), as the CLI's `sql --json` prints them. */
  readonly rows: Record<string, unknown>[];
  /** A row after them exists. */
  readonly more: boolean;
  /** The fleet's fingerprint the rows were read from. */
  readonly fingerprint: string;
}

/** Run one read-only SELECT; returns rows [offset, offset + want) and whether more follow. */
export async function sandboxedQuery(loc: Locations, sql: string, offset: number, want: number): Promise<SqlRows> {
  const files = await fleetFiles(loc);
  const rm = await ReadModel.open(files, { labelsFile: loc.labelsFile });
  try {
    const allowed = [...files.bronze.map((b) => b.path), ...files.compacted.map((c) => c.path)];
    if (existsSync(loc.labelsFile)) allowed.push(loc.labelsFile);
    try {
      await rm.conn.run(`SET allowed_paths = [${allowed.map(sqlString).join(", ")}]`);
      await rm.conn.run("SET enable_external_access = false");
      await rm.conn.run("SET lock_configuration = true");
    } catch (e) {
      throw new ReaderError("Io", `${files.storeUrl}: cannot restrict the query connection: ${firstLine((e as Error).message)}`, { cause: e });
    }
    const fail = (e: unknown): ReaderError => (e instanceof ReaderError ? e : new ReaderError("Query", `query failed: ${firstLine((e as Error).message)}`, { cause: e }));
    let count: number;
    let extracted;
    try {
      extracted = await rm.conn.extractStatements(sql);
      count = extracted.count;
    } catch (e) {
      throw fail(e);
    }
    if (count !== 1) throw new ReaderError("Query", `query refused: expected exactly one SELECT statement, got ${count} statements`);
    const timer = setTimeout(() => rm.conn.interrupt(), SQL_TIMEOUT_MS);
    try {
      const prepared = await extracted.prepare(0).catch((e: unknown) => {
        throw fail(e);
      });
      const { StatementType } = duckdb();
      if (prepared.statementType !== StatementType.SELECT) {
        throw new ReaderError("Query", `query refused: only a SELECT runs here (read-only), got a ${StatementType[prepared.statementType] ?? "non-SELECT"} statement`);
      }
      const res = await prepared.stream().catch((e: unknown) => {
        throw fail(e);
      });
      const columns = res.columnNames();
      const rows: Record<string, unknown>[] = [];
      let seen = 0;
      try {
        for await (const chunk of res.yieldRowsJs()) {
          for (const r of chunk) {
            if (seen++ < offset) continue;
            const row: Record<string, unknown> = {};
            for (let c = 0; c < columns.length; c++) row[columns[c]!] = jsValue(r[c]);
            rows.push(row);
          }
          if (rows.length > want) break;
        }
      } catch (e) {
        throw fail(e);
      }
      const more = rows.length > want;
      // The CLI's `sql --json` bytes: Dates as ISO strings, BigInts as numbers when safe.
      const plain = JSON.parse(toJson(rows.slice(0, want), 0)) as Record<string, unknown>[];
      return { columns, rows: plain, more, fingerprint: files.fingerprint };
    } finally {
      clearTimeout(timer);
    }
  } finally {
    rm.close();
  }
}
