import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import {
  decodeWal,
  decodeWalTail,
  encodeRecordFrame,
  encodeWalTail,
  FEATURE_FLOOR_FILE,
  isWalError,
  LINEAGE_FRAME_BYTES,
  readFeatureFloor,
  readWalFile,
  WalWriter,
  type WalError,
} from "../src/index.js";
import { readHex, runStarted } from "./helpers.js";

afterAll(cleanupTempDirs);

const here = dirname(fileURLToPath(import.meta.url));
const walPath = (root: string) => join(root, "wal", "31a7840439280f40.wal");
const mode = (p: string) => statSync(p).mode & 0o777;

async function refused(p: Promise<unknown>): Promise<WalError> {
  try {
    await p;
  } catch (e) {
    if (isWalError(e)) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("WalWriter", () => {
  it("creates a new file starting with a lineage frame, owner-only modes", async () => {
    const root = tempDir("wal-w");
    const p = walPath(root);
    const w = await WalWriter.open(p, { fsync: "always" });
    expect(w.created).toBe(true);
    expect(statSync(p).size).toBe(LINEAGE_FRAME_BYTES);
    expect(mode(p)).toBe(0o600);
    expect(mode(dirname(p))).toBe(0o700);
    await w.append({ type: "step_started", step_id: 1 });
    await w.append({ type: "turn_finished", step_id: 1 });
    await w.close();
    const r = await readWalFile(p);
    expect(r.lineageId).toBe(w.lineageId);
    expect(r.lineageFrames).toBe(3);
    expect(r.records.map((e) => e.seq)).toEqual([1, 2]);
    // Each append is record frame then lineage frame: the file ends with a lineage frame.
    const bytes = readFileSync(p);
    expect(bytes.subarray(bytes.length - LINEAGE_FRAME_BYTES).equals(bytes.subarray(0, LINEAGE_FRAME_BYTES))).toBe(true);
  });

  it("requires an explicit fsync policy", async () => {
    const root = tempDir("wal-w");
    const e = await refused(WalWriter.open(walPath(root), { fsync: "sometimes" as "always" }));
    expect(e.code).toBe("InvalidArgument");
  });

  it("reopen continues the sequence and lineage; only the writer truncates a torn tail", async () => {
    const root = tempDir("wal-w");
    const p = walPath(root);
    const w = await WalWriter.open(p, { fsync: "manual" });
    await w.append({ type: "step_started", step_id: 1 });
    await w.sync();
    await w.close();
    const clean = statSync(p).size;
    const torn = encodeRecordFrame({ type: "step_started", step_id: 2 }, { seq: 2 }).subarray(0, 60);
    appendFileSync(p, torn);
    // A reader stops at the torn tail and leaves it alone.
    const r = await readWalFile(p);
    expect(r.tornTail).toEqual({ offset: clean, bytes: 60 });
    expect(statSync(p).size).toBe(clean + 60);
    const w2 = await WalWriter.open(p, { fsync: "always" });
    expect(w2.truncated).toEqual({ offset: clean, bytes: 60 });
    expect(w2.lineageId).toBe(w.lineageId);
    expect(w2.lastSeq).toBe(1);
    expect((await w2.append({ type: "step_started", step_id: 2 })).seq).toBe(2);
    await w2.close();
    const r2 = await readWalFile(p);
    expect(r2.tornTail).toBeNull();
    expect(r2.records.map((e) => e.seq)).toEqual([1, 2]);
  });

  it("tail cache: close records where the file ends; a reopen that finds the file so continues from it without decoding, any other file is decoded", async () => {
    const root = tempDir("wal-tail");
    const p = walPath(root);
    const cache = `${p}.tail`;
    const w = await WalWriter.open(p, { fsync: "always", tailCache: cache });
    for (let i = 1; i <= 3; i++) await w.append({ type: "step_started", step_id: i });
    await w.close();
    const st = statSync(p, { bigint: true });
    const tail = decodeWalTail(readFileSync(cache, "utf8"))!;
    expect(tail).toEqual({ stat: `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`, lastSeq: 3, lineageId: w.lineageId });
    expect(mode(cache)).toBe(0o600);
    // The reopen takes the cache's word (a cache saying seq 41 of this very file is believed: it
    // decoded nothing), and records the new end.
    writeFileSync(cache, encodeWalTail({ ...tail, lastSeq: 41 }));
    const w2 = await WalWriter.open(p, { fsync: "always", tailCache: cache });
    expect(w2.lastSeq).toBe(41);
    expect(w2.size).toBe(Number(st.size));
    await w2.close();
    expect(decodeWalTail(readFileSync(cache, "utf8"))!.lastSeq).toBe(41);
    // The file changed since (a torn append of a killed writer): decoded, the torn tail truncated.
    writeFileSync(cache, encodeWalTail(tail));
    const clean = statSync(p).size;
    appendFileSync(p, encodeRecordFrame({ type: "step_started", step_id: 4 }, { seq: 4 }).subarray(0, 60));
    const w3 = await WalWriter.open(p, { fsync: "always", tailCache: cache });
    expect(w3.truncated).toEqual({ offset: clean, bytes: 60 });
    expect(w3.lastSeq).toBe(3);
    expect((await w3.append({ type: "step_started", step_id: 4 })).seq).toBe(4);
    await w3.close();
    expect((await readWalFile(p)).records.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(decodeWalTail(readFileSync(cache, "utf8"))!.lastSeq).toBe(4);
    // A cache that does not decode, or names another file (its inode), is no cache: the file is decoded.
    for (const bad of ["not json", encodeWalTail({ ...tail, stat: `1:${tail.stat.split(":").slice(1).join(":")}`, lastSeq: 41 })]) {
      writeFileSync(cache, bad);
      const w4 = await WalWriter.open(p, { fsync: "always", tailCache: cache });
      expect(w4.lastSeq).toBe(4);
      await w4.close();
    }
    // Appends not synced when it closes (the manual policy): no cache is recorded.
    const before = readFileSync(cache, "utf8");
    const w5 = await WalWriter.open(p, { fsync: "manual", tailCache: cache });
    await w5.append({ type: "step_started", step_id: 5 });
    await w5.close();
    expect(readFileSync(cache, "utf8")).toBe(before);
  });

  it("tail cache format: one JSON line, golden; anything else decodes to no cache", () => {
    const golden = '{"format":"lake.wal-tail","schema":1,"stat":"3286244:1157:1796180582827296573:1796180582831296573","last_seq":7,"lineage":"0f8e2d3c-4b5a-4697-8877-665544332211"}\n';
    const t = { stat: "3286244:1157:1796180582827296573:1796180582831296573", lastSeq: 7, lineageId: "0f8e2d3c-4b5a-4697-8877-665544332211" };
    expect(encodeWalTail(t)).toBe(golden);
    expect(decodeWalTail(golden)).toEqual(t);
    for (const bad of [golden.replace('"schema":1', '"schema":2'), golden.replace("lake.wal-tail", "other"), golden.replace('"last_seq":7', '"last_seq":-1'), golden.replace("3286244:", ""), golden.replace("0f8e2d3c", "0F8E2D3C"), "[]", "{"]) {
      expect(decodeWalTail(bad)).toBeUndefined();
    }
  });

  it("an upgraded (pre-lineage) file gets its lineage frame just before its first new record", async () => {
    const root = tempDir("wal-w");
    const p = walPath(root);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, "");
    const w = await WalWriter.open(p, { fsync: "always" });
    expect(w.created).toBe(false);
    const a = await w.append({ type: "step_started", step_id: 1 });
    expect(a.offset).toBe(LINEAGE_FRAME_BYTES);
    await w.close();
    const r = decodeWal(readFileSync(p));
    expect(r.lineageId).toBe(w.lineageId);
    expect(r.lineageFrames).toBe(2);
  });

  it("refuses to open a refused file and does not touch it", async () => {
    for (const v of ["corrupt-digest", "spliced", "newer-writer", "seq-gap"]) {
      const root = tempDir("wal-w");
      const p = walPath(root);
      mkdirSync(dirname(p), { recursive: true });
      const bytes = readHex(`${v}.hex`);
      writeFileSync(p, bytes);
      const e = await refused(WalWriter.open(p, { fsync: "always" }));
      expect(["Corrupt", "Spliced", "NewerWriter", "SequenceError"]).toContain(e.code);
      expect(readFileSync(p).equals(bytes)).toBe(true);
    }
  });

  it("raises the feature floor (sorted, grow-only, 0600) before the first gated frame", async () => {
    const root = tempDir("wal-w");
    const floor = join(root, FEATURE_FLOOR_FILE);
    writeFileSync(floor, "zz-later-build/v2\n");
    const w = await WalWriter.open(walPath(root), { fsync: "always" });
    await w.append({ type: "step_started", step_id: 1 });
    expect(readFeatureFloor(floor)).toEqual(["zz-later-build/v2"]);
    const g = await w.append({ type: "steered", input: [] });
    expect(g.gated).toBe(true);
    expect(readFileSync(floor, "utf8")).toBe("steer-queue/v1\nzz-later-build/v2\n");
    await w.append({ ...runStarted, scope: { owner: { kind: "reserved", module_id: "m" }, ref: "r", scope_epoch: 1, agent_id: "a" } });
    expect(readFeatureFloor(floor)).toEqual(["agent-run-scopes/v1", "scope/v1", "steer-queue/v1", "zz-later-build/v2"]);
    expect(mode(floor)).toBe(0o600);
    await w.close();
    const r = await readWalFile(walPath(root));
    expect(r.records.map((e) => [e.seq, e.gated, e.requires])).toEqual([
      [1, false, []],
      [2, true, ["steer-queue/v1"]],
      [3, true, ["agent-run-scopes/v1", "scope/v1"]],
    ]);
  });

  it("refuses a gated append, writing nothing, when the floor cannot be raised", async () => {
    const root = tempDir("wal-w");
    const p = walPath(root);
    mkdirSync(join(root, FEATURE_FLOOR_FILE)); // a directory where the floor file must go: rename fails
    const w = await WalWriter.open(p, { fsync: "always" });
    await w.append({ type: "step_started", step_id: 1 });
    const size = statSync(p).size;
    const e = await refused(w.append({ type: "steered", input: [] }));
    expect(e.code).toBe("FeatureFloor");
    expect(statSync(p).size).toBe(size);
    // Ungated appends continue with the next seq.
    expect((await w.append({ type: "turn_finished", step_id: 1 })).seq).toBe(2);
    await w.close();
    expect((await readWalFile(p)).records.map((x) => x.record.type)).toEqual(["step_started", "turn_finished"]);
  });

  it("refuses invalid records without writing", async () => {
    const root = tempDir("wal-w");
    const p = walPath(root);
    const w = await WalWriter.open(p, { fsync: "manual" });
    const e = await refused(w.append({ type: "model_step_finished", step_id: 1 }));
    expect(e.code).toBe("InvalidArgument");
    expect(statSync(p).size).toBe(LINEAGE_FRAME_BYTES);
    await w.close();
    expect((await refused(w.append({ type: "step_started", step_id: 1 }))).code).toBe("Closed");
  });

  it("crash: a writer killed with SIGKILL mid-stream loses no acknowledged record; reopen truncates and continues", async () => {
    // Run the child in this very process tree (no tsx CLI wrapper process), so SIGKILL kills the writer itself.
    const require = createRequire(import.meta.url);
    const tsxLoader = pathToFileURL(require.resolve("tsx")).href;
    const root = tempDir("wal-crash");
    const p = walPath(root);
    let acked = 0;
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ["--import", tsxLoader, join(here, "crash-child.ts"), p], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      const target = acked + 20 + round * 13;
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          const seqs = out.split("\n").filter(Boolean).map(Number);
          if (seqs.length && seqs.at(-1)! >= target) {
            child.kill("SIGKILL");
          }
        });
        child.on("exit", (_code, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`child exited without being killed (${signal})`))));
      });
      const seqs = out.split("\n").filter(Boolean).map(Number);
      const lastAck = seqs.at(-1)!;
      expect(lastAck).toBeGreaterThanOrEqual(target);
      // A reader sees every acknowledged record (perhaps more), possibly followed by a torn tail.
      const r = await readWalFile(p, { collect: false });
      expect(r.lastSeq).toBeGreaterThanOrEqual(lastAck);
      const w = await WalWriter.open(p, { fsync: "always" });
      expect(w.lastSeq).toBe(r.lastSeq);
      await w.append({ type: "step_started", step_id: round });
      await w.close();
      const after = await readWalFile(p);
      expect(after.tornTail).toBeNull();
      expect(after.lastSeq).toBe(r.lastSeq + 1);
      acked = after.lastSeq;
    }
  }, 60_000);
});
