// The forget record's codec (golden vector) and the removal order on a real root.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalize } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import {
  decodeForgetRecord, encodeForgetRecord, finishRemovals, forgetSession, isForgotten, isStoreError, listSessions, openSession, readForgetRecord, undoForget, type Convert,
} from "../src/index.js";
import { decodeMetricsState, deriveMetrics, listSpool } from "../src/metrics.js";

afterAll(cleanupTempDirs);

const VECTOR = new URL("./vectors/forget-record.json", import.meta.url);

const convert: Convert = (lines, { sessionId, source }) =>
  lines.map((l) => canonicalize({ runtime: source.runtime, session_id: sessionId, stream: source.stream, kind: "user", record_id: `r${l.line}`, source_path: source.source, source_offset: l.offset, source_line: l.line, adapter: source.adapter, adapter_version: source.adapterVersion }));

async function collectOne(root: string, vendor: string, id: string): Promise<string> {
  const path = join(vendor, `${id}.jsonl`);
  writeFileSync(path, '{"a":1}\n{"a":2}\n');
  const s = await openSession(root, id);
  try {
    const p = s.beginPass();
    await p.collectAppend({ path, source: `t:${id}.jsonl`, stream: "main", kind: "transcript", runtime: "t", adapter: "t", adapterVersion: "1" }, convert);
    p.finish();
  } finally {
    s.close();
  }
  return path;
}

describe("forget record", () => {
  it("golden vector: decodes, re-encodes byte for byte; strict about fields, paths and schema", () => {
    const buf = readFileSync(VECTOR);
    expect(createHash("sha256").update(buf).digest("hex")).toBe("78d7280dda8baeca1aeaa203fc122d339210f9396013fd1a78777686084fa13f");
    const r = decodeForgetRecord(buf.toString("utf8"), "v.json");
    expect(r).toMatchObject({ schema: 1, session: "221ac729", state: "removing" });
    expect(encodeForgetRecord(r)).toBe(buf.toString("utf8"));
    const o = JSON.parse(buf.toString("utf8")) as Record<string, unknown>;
    for (const bad of [{ ...o, extra: 1 }, { ...o, schema: 2 }, { ...o, state: "gone" }, { ...o, sources: ["relative/path"] }, { ...o, requested_at: "soon" }]) {
      expect(() => decodeForgetRecord(JSON.stringify(bad), "b.json")).toThrow(/b\.json: not a forget record/);
    }
    expect(() => decodeForgetRecord(buf.toString("utf8").slice(0, 40), "t.json")).toThrow(/t\.json/);
  });
});

describe("forgetSession", () => {
  it("removes source, session, chain and spool in order, keeps the record as the exclusion, and openSession refuses the session until undone", async () => {
    const dir = tempDir("store-forget");
    const root = join(dir, "root");
    const vendor = join(dir, "vendor");
    mkdirSync(join(vendor, "x-s1"), { recursive: true });
    const src = await collectOne(root, vendor, "s1");
    await collectOne(root, vendor, "s2");
    writeFileSync(join(vendor, "x-s1", "child.jsonl"), "{}\n");
    mkdirSync(join(root, "_conversations", "s1", "rounds"), { recursive: true });
    writeFileSync(join(root, "_conversations", "s1", "rounds", "r000001-aaaaaaaaaaaa.sf"), "{}\n");
    const spool = join(root, "_hooks", "spool", "s1.wal");
    mkdirSync(join(root, "_hooks", "spool"), { recursive: true });
    writeFileSync(spool, "w");
    const steps: string[] = [];
    const dropped: string[] = [];
    const r = await forgetSession(root, "s1", { sources: [src, join(vendor, "x-s1", "child.jsonl")], sourceRoots: [vendor], spool: [spool] }, { dropState: (id) => dropped.push(id), onStep: (n) => steps.push(n), fsync: false });
    expect(r.started).toBe(true);
    expect(r.sourceDirs).toEqual([join(vendor, "x-s1")]);
    expect(existsSync(vendor)).toBe(true);
    expect(listSessions(root)).toEqual(["s2"]);
    expect(existsSync(join(root, "_conversations", "s1"))).toBe(false);
    expect(existsSync(spool)).toBe(false);
    expect(readdirSync(join(root, "_removed"))).toEqual([]);
    expect(dropped).toEqual(["s1"]);
    const order = ["forget:record:rename", "forget:source-deleted", "forget:session-renamed", "forget:chain-renamed", "forget:spool-deleted", "forget:state-dropped"];
    expect(order.map((n) => steps.indexOf(n))).toEqual([...order.map((n) => steps.indexOf(n))].sort((a, b) => a - b));
    expect(steps.lastIndexOf("forget:record:rename")).toBeGreaterThan(steps.indexOf("forget:state-dropped"));
    expect(readForgetRecord(root, "s1")?.state).toBe("removed");
    expect(isForgotten(root, "s1")).toBe(true);
    await expect(openSession(root, "s1")).rejects.toSatisfy((e) => isStoreError(e) && e.code === "Forgotten");
    expect(existsSync(join(root, "s1"))).toBe(false);
    expect(undoForget(root, "s1")).toBe(true);
    await collectOne(root, vendor, "s1");
    expect(listSessions(root)).toEqual(["s1", "s2"]);
  });

  it("finishRemovals takes a removing record to its end and empties _removed/; a symlinked _removed stops it", async () => {
    const dir = tempDir("store-finish");
    const root = join(dir, "root");
    const vendor = join(dir, "vendor");
    mkdirSync(vendor, { recursive: true });
    await collectOne(root, vendor, "s1");
    mkdirSync(join(root, "_forget"), { recursive: true });
    writeFileSync(join(root, "_forget", "s1.json"), encodeForgetRecord({ schema: 1, session: "s1", state: "removing", requested_at: new Date().toISOString(), sources: [], source_roots: [], spool: [] }));
    mkdirSync(join(root, "_removed", "old", "streams"), { recursive: true });
    const done = await finishRemovals(root, { fsync: false });
    expect(done.map((d) => d.session)).toEqual(["s1"]);
    expect(readdirSync(join(root, "_removed"))).toEqual([]);
    expect(listSessions(root)).toEqual([]);
    await collectOne(root, vendor, "s3");
    writeFileSync(join(root, "_forget", "s3.json"), encodeForgetRecord({ schema: 1, session: "s3", state: "removing", requested_at: new Date().toISOString(), sources: [], source_roots: [], spool: [] }));
    const rm = join(root, "_removed");
    (await import("node:fs")).rmSync(rm, { recursive: true });
    mkdirSync(join(dir, "elsewhere"));
    symlinkSync(join(dir, "elsewhere"), rm);
    await expect(finishRemovals(root)).rejects.toThrow(/_removed: is a symbolic link; no session is removed/);
    expect(existsSync(join(root, "s3"))).toBe(true);
  });

  it("deletes the session's derived metrics and its metrics.state line, the other sessions' stay; a stop between files is finished by the next run", async () => {
    const dir = tempDir("store-forget-metrics");
    const root = join(dir, "root");
    const vendor = join(dir, "vendor");
    mkdirSync(vendor, { recursive: true });
    for (const id of ["s1", "s2"]) {
      await collectOne(root, vendor, id);
      writeFileSync(join(vendor, `${id}.jsonl`), '{"a":1}\n{"a":2}\n{"a":3}\n');
      const s = await openSession(root, id);
      const p = s.beginPass();
      await p.collectAppend({ path: join(vendor, `${id}.jsonl`), source: `t:${id}.jsonl`, stream: "main", kind: "transcript", runtime: "t", adapter: "t", adapterVersion: "1" }, convert);
      p.finish();
      s.close();
    }
    await deriveMetrics(root);
    const local = (id: string) => listSpool(root).filter((e) => e.parsed.kind === "local" && e.parsed.sessionId === id).map((e) => e.name);
    const state = () => decodeMetricsState(readFileSync(join(root, "_metrics", "metrics.state"), "utf8"), "metrics.state").sessions;
    expect(local("s1")).toHaveLength(2);
    expect(local("s2")).toHaveLength(2);
    expect([...state().keys()]).toEqual(["s1", "s2"]);
    // Stopped after the first derived file is deleted: the record says removing, the next run finishes.
    let deleted = 0;
    const stop = (n: string) => {
      if (n === "forget:metrics-deleted" && ++deleted === 1) throw new Error("stopped");
    };
    await expect(forgetSession(root, "s1", {}, { onStep: stop, fsync: false })).rejects.toThrow("stopped");
    expect(local("s1")).toHaveLength(1);
    expect(readForgetRecord(root, "s1")?.state).toBe("removing");
    const [r] = await finishRemovals(root, { fsync: false });
    expect(r?.metrics).toHaveLength(1);
    expect(local("s1")).toEqual([]);
    expect(local("s2")).toHaveLength(2);
    expect([...state().keys()]).toEqual(["s2"]);
    expect(readForgetRecord(root, "s1")?.state).toBe("removed");
    // Nothing of s1 is derived again.
    const again = await deriveMetrics(root);
    expect(again.derived).toBe(0);
    expect(local("s1")).toEqual([]);
  });
});
