// DuckDB's Node API, loaded on first use through require: it is CommonJS, and an ESM import of it
// first scans each of its modules for their export names (most of its load time, several hundred
// ms), which require does not. Importing a module of this package loads no DuckDB.
import { createRequire } from "node:module";

/** The `@duckdb/node-api` module. */
export type DuckDB = typeof import("@duckdb/node-api");

const requireCjs = createRequire(import.meta.url);
let loaded: DuckDB | undefined;

/** `@duckdb/node-api`, loaded once (the first call pays its load). */
export function duckdb(): DuckDB {
  return (loaded ??= requireCjs("@duckdb/node-api") as DuckDB);
}
