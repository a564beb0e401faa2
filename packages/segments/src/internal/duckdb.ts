// DuckDB's Node API, loaded on first use through require: it is CommonJS, and an ESM import of it
// first scans each of its modules for their export names (most of its load time, several hundred
// ms), which require does not. Importing a module of this package loads no DuckDB.
import { createRequire } from "node:module";

/** The `@duckdb/node-api` module. */
export type DuckDB = typeof import("@duckdb/node-api");
type Bindings = typeof import("@duckdb/node-bindings");

const requireCjs = createRequire(import.meta.url);
let loaded: DuckDB | undefined;
let bindings: Bindings | undefined;

/**
 * `@duckdb/node-bindings`, loaded once. On Linux its entry asks detect-libc whether the C library is
 * musl, and detect-libc loads node:child_process for that: some 7 ms of a push that writes a few
 * small segments. A package manager installs only the native package that matches the machine's C
 * library (the `libc` field of each), so where exactly one of the two is installed it is the answer,
 * and it is required directly; where both are (or it does not load), the entry decides, as before.
 * Node caches a native module by its path, so node-api, if loaded after, gets the same one. (A
 * glibc build that loads on a musl machine through a compatibility layer is used here, where node-api's
 * entry would look for the musl one: a mismatch only such a machine with only the glibc build has.)
 */
export function nodeBindings(): Bindings {
  return (bindings ??= loadBindings());
}

function loadBindings(): Bindings {
  if (process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64")) {
    const from = createRequire(requireCjs.resolve("@duckdb/node-bindings"));
    const installed: string[] = [];
    for (const pkg of [`@duckdb/node-bindings-linux-${process.arch}`, `@duckdb/node-bindings-linux-${process.arch}-musl`]) {
      try {
        installed.push(from.resolve(`${pkg}/duckdb.node`));
      } catch {
        // Not installed.
      }
    }
    if (installed.length === 1) {
      try {
        return from(installed[0]!) as Bindings;
      } catch {
        // Not for this machine after all: the entry's own choice (and its error) below.
      }
    }
  }
  return requireCjs("@duckdb/node-bindings") as Bindings;
}

/** `@duckdb/node-api`, loaded once (the first call pays its load). */
export function duckdb(): DuckDB {
  return (loaded ??= requireCjs("@duckdb/node-api") as DuckDB);
}

/**
 * What {@link copyParquet} runs its COPY on: a `@duckdb/node-api` DuckDBConnection, or a
 * {@link CopyConnection}.
 */
export interface SqlRunner {
  run(sql: string): Promise<{ readonly rowsChanged: number }>;
}

/**
 * A DuckDB connection on `@duckdb/node-bindings`, the native layer under node-api (the same
 * version), for a writer that only runs statements and reads no rows (SegmentWriter's COPY). Not
 * loading node-api's JavaScript (its types, values and appender modules) halves what opening DuckDB
 * costs a short-lived process: push of a few small segments starts measurably sooner. A connection
 * opened with {@link CopyConnection.open} owns its in-memory database; {@link CopyConnection.connect}
 * adds another connection to it, whose statements run beside the first's (each on a thread of its own).
 */
export class CopyConnection implements SqlRunner {
  readonly #b: Bindings;
  readonly #owner: CopyConnection | undefined;
  #db: import("@duckdb/node-bindings").Database | undefined;
  #conn: import("@duckdb/node-bindings").Connection | undefined;
  readonly #others = new Set<CopyConnection>();

  private constructor(b: Bindings, owner?: CopyConnection) {
    this.#b = b;
    this.#owner = owner;
  }

  /** Open an in-memory DuckDB with `options` (DuckDB settings by name) and connect to it. */
  static async open(options: Readonly<Record<string, string>>): Promise<CopyConnection> {
    const b = nodeBindings();
    const c = new CopyConnection(b);
    const config = b.create_config();
    // What node-api names itself to DuckDB, so a file written here is the file node-api writes.
    b.set_config(config, "duckdb_api", "node-neo-api");
    for (const [name, value] of Object.entries(options)) b.set_config(config, name, value);
    c.#db = await b.open(":memory:", config);
    try {
      c.#conn = await b.connect(c.#db);
    } catch (err) {
      c.close();
      throw err;
    }
    return c;
  }

  /** Another connection to this connection's database (closed with it, or on its own). */
  async connect(): Promise<CopyConnection> {
    const owner = this.#owner ?? this;
    if (!owner.#db) throw new Error("DuckDB connection is closed");
    const c = new CopyConnection(this.#b, owner);
    c.#conn = await this.#b.connect(owner.#db);
    owner.#others.add(c);
    return c;
  }

  /** Run one statement; its rows, if any, are not read. */
  async run(sql: string): Promise<{ readonly rowsChanged: number }> {
    if (!this.#conn) throw new Error("DuckDB connection is closed");
    return { rowsChanged: this.#b.rows_changed(await this.#b.query(this.#conn, sql)) };
  }

  /** Disconnect; the connection that opened the database also closes the database (and its other connections). */
  close(): void {
    if (this.#conn) this.#b.disconnect_sync(this.#conn);
    this.#conn = undefined;
    if (this.#owner) this.#owner.#others.delete(this);
    for (const o of this.#others) o.close();
    if (this.#db) this.#b.close_sync(this.#db);
    this.#db = undefined;
  }
}
