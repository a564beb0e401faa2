// One decoder: every @lake/wal golden vector through decodeWal, inspectWal and the collector's
// framed reading (the real bin, the vector as a live broca WAL and as a hook spool file) gives the
// same verdict: the same refusal with the same reason and offset, or the same records up to the
// same valid length.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeCursor } from "@lake/store";
import { decodeWal, inspectWal, isWalError, walAddress } from "@lake/wal";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { runCli } from "./helpers.js";
import { fixture } from "@lake/testdata";

afterAll(cleanupTempDirs);

/** @lake/wal's golden vectors (@lake/testdata wal/). */
const VECTORS = fixture("wal");

interface Vector {
  name: string;
  file: string;
  expect: { status: string; error_code: string | null; error_offset: number | null; records: { seq: number }[]; skipped: { seq: number }[] };
}

const manifest = JSON.parse(readFileSync(join(VECTORS, "vectors.json"), "utf8")) as { wal: Vector[] };
const hex = (f: string) => Buffer.from(readFileSync(join(VECTORS, f), "utf8").replace(/\s+/g, ""), "hex");

interface Verdict {
  /** null when the file is accepted; else the refusal: reason and offset. */
  refusal: string | null;
  /** Sequence numbers of the records (known and skipped types) read. */
  seqs: number[];
  /** Bytes read: the end of the last complete frame (accepted files only). */
  validLength: number | null;
}

function decodeVerdict(bytes: Buffer): Verdict {
  try {
    const r = decodeWal(bytes);
    return { refusal: null, seqs: [...r.records, ...r.skipped].map((e) => e.seq).sort((a, b) => a - b), validLength: r.validLength };
  } catch (e) {
    if (!isWalError(e)) throw e;
    return { refusal: `${e.reason} at byte ${e.data.offset}`, seqs: [], validLength: null };
  }
}

let dir: string;
let root: string;
const addr = (name: string) => walAddress({ project_root: "/vectors", harness: "conformance", session: name });
const hookName = (name: string) => `vector-${name}`;

beforeAll(async () => {
  dir = tempDir("wal-conformance");
  const state = join(dir, "broca-state");
  root = join(dir, "root");
  mkdirSync(join(state, "wal"), { recursive: true });
  mkdirSync(join(root, "_hooks", "spool"), { recursive: true });
  for (const v of manifest.wal) {
    writeFileSync(join(state, "wal", `${addr(v.name)}.wal`), hex(v.file));
    writeFileSync(join(root, "_hooks", "spool", `${hookName(v.name)}.wal`), hex(v.file));
  }
  const r = await runCli(["collect", "--root", root, "--sources-only", "--source", `broca=${state}`, "--json"], { HOME: join(dir, "home") });
  // Some vectors are refused: the pass completes with problems, and never stops (exit 1) on one.
  expect(r.code, r.stderr).toBe(3);
}, 300_000);

/** What the collector made of one session's source: the cursor's verdict and the records it landed. */
function collectorVerdict(session: string): Verdict {
  const main = join(root, session, "streams", "main");
  let names: string[] = [];
  try {
    names = readdirSync(main);
  } catch {
    return { refusal: null, seqs: [], validLength: 0 }; // nothing to read: no cursor, nothing landed
  }
  const cursorName = names.find((n) => n.endsWith(".cursor"))!;
  const cursor = decodeCursor(readFileSync(join(main, cursorName), "utf8"), cursorName);
  const seqs = new Set<number>();
  for (const n of names.filter((x) => x.endsWith(".sd"))) {
    for (const line of readFileSync(join(main, n), "utf8").split("\n").slice(1)) if (line) seqs.add((JSON.parse(line) as { source_line: number }).source_line);
  }
  if (cursor.state === "conflict") return { refusal: cursor.conflict_reason ?? "", seqs: [...seqs].sort((a, b) => a - b), validLength: null };
  return { refusal: null, seqs: [...seqs].sort((a, b) => a - b), validLength: cursor.kind === "append" ? cursor.offset : null };
}

describe("every @lake/wal vector: decodeWal, inspectWal and the collector agree", { timeout: 120_000 }, () => {
  it("covers accepted, torn and refused vectors", () => {
    expect(manifest.wal.length).toBeGreaterThan(20);
    expect(new Set(manifest.wal.map((v) => v.expect.status))).toEqual(new Set(["ok", "corrupt", "spliced", "sequence_error", "newer_writer"]));
  });

  for (const v of manifest.wal) {
    it(`${v.name}`, async () => {
      const bytes = hex(v.file);
      const want = decodeVerdict(bytes);
      // The manifest's own expectation.
      expect(want.refusal === null, v.expect.status).toBe(v.expect.status === "ok");
      if (want.refusal === null) expect(want.seqs).toEqual([...v.expect.records, ...v.expect.skipped].map((e) => e.seq).sort((a, b) => a - b));
      // inspectWal over the same bytes in a file.
      const file = join(dir, `${v.name}.wal`);
      writeFileSync(file, bytes);
      const ins = await inspectWal(file);
      expect(ins.status === "ok").toBe(want.refusal === null);
      if (want.refusal !== null) expect(ins.error).toContain(want.refusal);
      else expect([...ins.records, ...ins.skipped].map((e) => e.seq).sort((a, b) => a - b)).toEqual(want.seqs);
      // The collector, reading it as a broca WAL and as a hook spool file.
      for (const session of [addr(v.name), hookName(v.name)]) {
        const got = collectorVerdict(session);
        expect(got.refusal, session).toBe(want.refusal);
        if (want.refusal === null) {
          expect(got.seqs, session).toEqual(want.seqs);
          expect(got.validLength, session).toBe(want.validLength);
        } else expect(got.seqs, `${session}: nothing of a refused window lands`).toEqual([]);
      }
    });
  }
});
