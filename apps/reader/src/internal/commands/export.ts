// export and ddl.
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { replaceFrom } from "@lake/durable";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FLEET_COLUMNS, SEGMENT_COLUMNS, COMPACTED_COLUMNS, type Column } from "@lake/events";
import { arrowSchema } from "@lake/events/arrow";
import { RecordBatch, Struct, Table, makeData, tableToIPC, vectorFromArray, type Data } from "apache-arrow";
import { choice, text, flag, type RunContext } from "@lake/cli";
import { COMMON, locations, usageError, withReadModel, type Io } from "../context.js";
import { ReaderError } from "../errors.js";
import { toJson } from "../format.js";
import { firstLine, sqlString } from "../readmodel.js";
import { storeArg } from "../context.js";
import { readerCommand } from "./parse.js";

const EXT = { parquet: "parquet", ndjson: "ndjson", arrow: "arrow" } as const;

const EXPORT_OPTIONS = {
  ...COMMON,
  format: choice("F", ["parquet", "ndjson", "arrow"], "parquet, ndjson or arrow", { required: true }),
  out: text("DIR", "output directory (created when missing)", { required: true }),
  json: flag('print {"file", "format", "rows", "bytes"}'),
} as const;

async function exportEvents({ values, io }: RunContext<typeof EXPORT_OPTIONS, Io>): Promise<number> {
  const format = values.format;
  const file = join(values.out, `events.${EXT[format]}`);
  if (existsSync(file)) throw new ReaderError("Usage", `${file}: already exists; not replaced`, { data: { file } });
  try {
    mkdirSync(values.out, { recursive: true });
  } catch (e) {
    throw new ReaderError("Io", `${values.out}: cannot create: ${(e as Error).message}`, { data: { file: values.out }, cause: e });
  }
  const tmp = `${file}.tmp-${process.pid}`;
  const cols = FLEET_COLUMNS.map((c) => `"${c.name}"`).join(", ");
  const order = "ORDER BY session_id, stream, ts NULLS LAST, source_path, source_line NULLS LAST, file_row";
  let rows = 0;
  try {
    await withReadModel(locations(values, io.env, io.damaged), async (rm) => {
      if (format === "parquet" || format === "ndjson") {
        const opts = format === "parquet" ? "FORMAT parquet, COMPRESSION zstd" : "FORMAT json";
        const tsCol = format === "ndjson" ? FLEET_COLUMNS.map((c) => (c.type === "timestamp" ? `strftime("${c.name}", '%Y-%m-%dT%H:%M:%S.%gZ') AS "${c.name}"` : `"${c.name}"`)).join(", ") : cols;
        await rm.conn.run(`COPY (SELECT ${tsCol} FROM events ${order}) TO ${sqlString(tmp)} (${opts})`);
        const n = await rm.query("SELECT count(*) AS n FROM events");
        rows = Number(n.rows[0]!.n);
      } else {
        const res = await rm.conn.run(`SELECT ${cols} FROM events ${order}`);
        const data = await res.getColumnsJS();
        rows = data[0]?.length ?? 0;
        const table = arrowTable(FLEET_COLUMNS, data as unknown[][]);
        writeFileSync(tmp, tableToIPC(table, "file"));
      }
    });
    replaceFrom(tmp, file, { syncTemp: true });
  } catch (e) {
    rmSync(tmp, { force: true });
    if (e instanceof ReaderError) throw e;
    throw new ReaderError("Io", `${file}: cannot write: ${firstLine((e as Error).message)}`, { data: { file }, cause: e });
  }
  const bytes = statSync(file).size;
  if (values.json) io.out(toJson({ file, format, rows, bytes }) + "\n");
  else io.out(`${file}: ${rows} rows, ${bytes} bytes (${format})\n`);
  return 0;
}

/** `lake-reader export`. */
export const exportCommand = readerCommand({
  usage: "--format parquet|ndjson|arrow --out DIR [options]",
  description: `Write the deduplicated events (the \`events\` view, in the fleet table's columns: every canonical
record column, then agent, landed_seq, landed_row) to DIR/events.parquet (zstd), DIR/events.ndjson
(one JSON object per line) or DIR/events.arrow (Arrow IPC file, schema from @lake/events
arrowSchema). An existing file is never replaced (a usage error naming it).`,
  options: EXPORT_OPTIONS,
  run: exportEvents,
});

/** An Arrow table of columns of DuckDB JS values, typed by arrowSchema(columns). */
export function arrowTable(columns: readonly Column[], data: readonly unknown[][]): Table {
  const schema = arrowSchema(columns);
  const children: Data[] = [];
  let length = 0;
  columns.forEach((c, i) => {
    const field = schema.fields[i]!;
    const raw = data[i] ?? [];
    length = raw.length;
    const vals = raw.map((v) => {
      if (v === null || v === undefined) return null;
      switch (c.type) {
        case "bigint":
          return typeof v === "bigint" ? v : BigInt(v as number);
        case "integer":
        case "double":
          return Number(v);
        case "timestamp":
          return v instanceof Date ? v.getTime() : Date.parse(String(v));
        case "varchar[]":
          return (v as unknown[]).map(String);
        case "boolean":
          return Boolean(v);
        default:
          return String(v);
      }
    });
    const vec = vectorFromArray(vals as never[], field.type);
    if (vec.data.length !== 1) throw new Error(`arrow: column ${c.name} built in ${vec.data.length} chunks`);
    children.push(vec.data[0]!);
  });
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
  return new Table(schema, [batch]);
}

const TYPES: Record<string, Record<Column["type"], string>> = {
  trino: { varchar: "varchar", timestamp: "timestamp(6)", boolean: "boolean", integer: "integer", bigint: "bigint", double: "double", "varchar[]": "array(varchar)" },
  spark: { varchar: "STRING", timestamp: "TIMESTAMP", boolean: "BOOLEAN", integer: "INT", bigint: "BIGINT", double: "DOUBLE", "varchar[]": "ARRAY<STRING>" },
  athena: { varchar: "string", timestamp: "timestamp", boolean: "boolean", integer: "int", bigint: "bigint", double: "double", "varchar[]": "array<string>" },
};

/** DDL text for an engine over a store URL. */
export function ddl(engine: "duckdb" | "trino" | "spark" | "athena", storeUrl: string, schema = "lake"): string {
  const base = storeUrl.startsWith("file:") ? fileURLToPath(storeUrl).replace(/\/+$/, "") : storeUrl.replace(/\/+$/, "");
  const loc = (p: string) => (engine === "spark" && storeUrl.startsWith("file:") ? `file://${base}/${p}` : `${base}/${p}`);
  const bronzeParts = ["dt", "fleet", "runtime", "agent", "session"];
  const compParts = ["dt", "fleet", "gen"];
  if (engine === "duckdb") {
    return [
      `-- lake fleet store ${storeUrl}: external views over its Parquet (DuckDB)`,
      `CREATE OR REPLACE VIEW lake_sessions_bronze AS`,
      `  SELECT * FROM read_parquet(${sqlString(loc("sessions/dt=*/fleet=*/runtime=*/agent=*/session=*/seg-*.parquet"))}, hive_partitioning = true, hive_types_autocast = false, union_by_name = true);`,
      `CREATE OR REPLACE VIEW lake_sessions_compacted AS`,
      `  SELECT * FROM read_parquet(${sqlString(loc("sessions/compacted/dt=*/fleet=*/gen=*/part-*.parquet"))}, hive_partitioning = true, hive_types_autocast = false, union_by_name = true);`,
      "",
    ].join("\n");
  }
  const t = TYPES[engine]!;
  const q = engine === "trino" ? (n: string) => `"${n}"` : (n: string) => `\`${n}\``;
  const cols = (cs: readonly Column[]) => cs.map((c) => `  ${q(c.name)} ${t[c.type]}`);
  const strT = t.varchar;
  if (engine === "trino") {
    const table = (name: string, cs: readonly Column[], parts: string[], where: string) =>
      [
        `CREATE TABLE IF NOT EXISTS hive.${schema}.${name} (`,
        [...cols(cs), ...parts.map((p) => `  ${q(p)} ${strT}`)].join(",\n"),
        `) WITH (`,
        `  external_location = ${sqlString(loc(where))},`,
        `  format = 'PARQUET',`,
        `  partitioned_by = ARRAY[${parts.map(sqlString).join(", ")}]`,
        `);`,
        `CALL hive.system.sync_partition_metadata(${sqlString(schema)}, ${sqlString(name)}, 'ADD');`,
      ].join("\n");
    return [`-- lake fleet store ${storeUrl} (Trino, Hive connector)`, table("lake_sessions_bronze", SEGMENT_COLUMNS, bronzeParts, "sessions"), table("lake_sessions_compacted", COMPACTED_COLUMNS, compParts, "sessions/compacted"), ""].join("\n");
  }
  const table = (name: string, cs: readonly Column[], parts: string[], where: string) =>
    engine === "spark"
      ? [
          `CREATE TABLE IF NOT EXISTS ${schema}.${name} (`,
          [...cols(cs), ...parts.map((p) => `  ${q(p)} ${strT}`)].join(",\n"),
          `) USING PARQUET`,
          `PARTITIONED BY (${parts.map(q).join(", ")})`,
          `LOCATION ${sqlString(loc(where))};`,
          `MSCK REPAIR TABLE ${schema}.${name};`,
        ].join("\n")
      : [
          `CREATE EXTERNAL TABLE IF NOT EXISTS ${schema}.${name} (`,
          cols(cs).join(",\n"),
          `)`,
          `PARTITIONED BY (${parts.map((p) => `${q(p)} ${strT}`).join(", ")})`,
          `STORED AS PARQUET`,
          `LOCATION ${sqlString(loc(where) + "/")};`,
          `MSCK REPAIR TABLE ${schema}.${name};`,
        ].join("\n");
  const head = engine === "spark" ? `-- lake fleet store ${storeUrl} (Spark SQL)` : `-- lake fleet store ${storeUrl} (Athena)`;
  return [head, table("lake_sessions_bronze", SEGMENT_COLUMNS, bronzeParts, "sessions"), table("lake_sessions_compacted", COMPACTED_COLUMNS, compParts, "sessions/compacted"), ""].join("\n");
}

const DDL_OPTIONS = {
  ...COMMON,
  engine: choice("E", ["duckdb", "trino", "spark", "athena"], "duckdb, trino, spark or athena", { required: true }),
  schema: text("S", "schema/database name for trino, spark and athena (default lake)"),
} as const;

async function ddlText({ values, io }: RunContext<typeof DDL_OPTIONS, Io>): Promise<number> {
  const e = values.engine;
  const schema = values.schema ?? "lake";
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema)) throw usageError(`ddl: --schema ${JSON.stringify(schema)}: expected an identifier`);
  io.out(ddl(e, storeArg(values.store, io.env), schema));
  return 0;
}

/** `lake-reader ddl`. */
export const ddlCommand = readerCommand({
  usage: "--engine duckdb|trino|spark|athena [options]",
  description: `Print external table definitions over the store's Parquet: \`lake_sessions_bronze\`
(sessions/dt=/fleet=/runtime=/agent=/session=/seg-*.parquet) and \`lake_sessions_compacted\`
(sessions/compacted/dt=/fleet=/gen=/part-*.parquet), partition columns per the fleet layout.
(DuckDB refuses a glob that matches no file: create the compacted view once maint has compacted.)
Another engine does not follow _COMPACTED: query the compacted table for partitions that have a
marker (and only its current gen), the bronze table otherwise — or use lake-reader, which does.`,
  options: DDL_OPTIONS,
  run: ddlText,
});
