// The baseline's child: a plain DuckDB COPY of the given Parquet files into one zstd Parquet file,
// DuckDB's default settings. argv: a JSON file listing the inputs, the output path.
import { readFileSync } from "node:fs";
import { DuckDBInstance } from "@duckdb/node-api";
const [list, out] = process.argv.slice(2);
const paths = JSON.parse(readFileSync(list, "utf8"));
const db = await DuckDBInstance.create(":memory:");
const conn = await db.connect();
await conn.run(`COPY (SELECT * FROM read_parquet([${paths.map((p) => `'${p.replace(/'/g, "''")}'`).join(", ")}])) TO '${out.replace(/'/g, "''")}' (FORMAT parquet, COMPRESSION zstd)`);
conn.closeSync();
db.closeSync();
