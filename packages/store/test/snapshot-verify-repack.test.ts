import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import {
  checkLostSessions, decodeCursor, formatProblem, LostSessionTracker, openSession, readIndex, readLanded, repack, status, verify, type SnapshotCursor,
} from "../src/index.js";
import { convert, jline, src } from "./helpers.js";

afterAll(cleanupTempDirs);

function setup() {
  const base = tempDir("store-svr");
  const root = join(base, "root");
  const srcDir = join(base, "src");
  mkdirSync(srcDir, { recursive: true });
  return { root, srcDir };
}

async function snap(root: string, file: string, sid = "s1") {
  const s = await openSession(root, sid);
  const p = s.beginPass();
  const o = await p.collectSnapshot(src(file, { stream: "agent-1", kind: "meta" }), convert);
  p.finish();
  s.close();
  return o;
}

describe("snapshot cursors", () => {
  it("each change lands a new one-record file; trailing newlines do not count; an empty file lands nothing", async () => {
    const { root, srcDir } = setup();
    const f = join(srcDir, "agent-1.meta.json");
    writeFileSync(f, "");
    expect((await snap(root, f)).landed).toHaveLength(0);
    writeFileSync(f, JSON.stringify({ uuid: "m", text: "v1" }, null, 2));
    expect((await snap(root, f)).landed).toHaveLength(1);
    writeFileSync(f, JSON.stringify({ uuid: "m", text: "v1" }, null, 2) + "\n\n\r\n");
    expect((await snap(root, f)).status).toBe("unchanged");
    writeFileSync(f, JSON.stringify({ uuid: "m2", text: "v2" }));
    const o = await snap(root, f);
    expect(o.landed).toHaveLength(1);
    const idx = readIndex(root, "s1");
    expect(idx.files.map((x) => [x.kind, x.records])).toEqual([["meta", 1], ["meta", 1]]);
    const cp = join(root, "s1/streams/agent-1/meta.cursor");
    const c = decodeCursor(readFileSync(cp, "utf8"), cp) as SnapshotCursor;
    expect(c.kind).toBe("snapshot");
    expect(c.content_sha256).toBe(readLanded(root, "s1", 2).header.content_sha256);
    expect(readFileSync(cp, "utf8")).toMatch(/^schema +1\nkind +snapshot\nsource +\S+\ndev +\d+\nino +\d+\ncontent_sha256 +[0-9a-f]{64}\nsize +\d+\nmtime +\d+\nlast_seq +2\nupdated_at +\S+Z\nstate +active\n$/);
    unlinkSync(f);
    expect((await snap(root, f)).status).toBe("gone");
    writeFileSync(f, JSON.stringify({ uuid: "m2", text: "v2" }));
    const back = await snap(root, f);
    expect(back.reactivated).toBe(true);
    expect(back.status).toBe("unchanged");
  });
});

describe("verify", () => {
  it("reports first, middle and end gaps, digest mismatches and writable files, one line each", async () => {
    const { root, srcDir } = setup();
    const f = join(srcDir, "s.jsonl");
    for (let i = 0; i < 4; i++) {
      appendFileSync(f, jline(`u${i}`));
      const s = await openSession(root, "s1");
      const p = s.beginPass();
      await p.collectAppend(src(f), convert);
      p.finish();
      s.close();
    }
    expect(verify(root).ok).toBe(true);
    const files = readIndex(root, "s1").files;
    const dir = join(root, "s1");
    // middle gap
    rmSync(join(dir, files[1]!.rel), { force: true });
    let v = verify(root);
    expect(v.problems.map((p) => p.code).sort()).toEqual(["middle-gap", "missing-file"]);
    // first gap + end gap
    rmSync(join(dir, files[0]!.rel), { force: true });
    rmSync(join(dir, files[3]!.rel), { force: true });
    v = verify(root);
    expect(v.problems.map((p) => p.code).sort()).toEqual(["end-gap", "first-gap", "missing-file", "missing-file", "missing-file"]);
    expect(v.ok).toBe(false);
    for (const p of v.problems) expect(formatProblem(p)).not.toContain("\n");
    // corrupt bytes in the remaining file
    const last = join(dir, files[2]!.rel);
    chmodSync(last, 0o644);
    const b = readFileSync(last);
    b[b.length - 3] = b[b.length - 3]! ^ 1;
    writeFileSync(last, b);
    v = verify(root);
    const codes = v.problems.map((p) => p.code);
    expect(codes).toContain("writable");
    expect(codes).toContain("corrupt");
    expect(codes).toContain("digest");
  });
});

describe("repack", () => {
  it("re-cuts every file under a new budget, keeping each record's bytes and order, carrying cursors over", async () => {
    const { root, srcDir } = setup();
    const f = join(srcDir, "s.jsonl");
    const m = join(srcDir, "agent-1.meta.json");
    let all = "";
    for (let round = 0; round < 3; round++) {
      let chunk = "";
      for (let i = 0; i < 30; i++) chunk += jline(`r${round}-${i}`, "x".repeat(100));
      appendFileSync(f, chunk);
      all += chunk;
      writeFileSync(m, JSON.stringify({ uuid: "meta", text: `v${round}` }));
      const s = await openSession(root, "s1", { maxDeltaBytes: 1500 });
      const p = s.beginPass();
      await p.collectAppend(src(f), convert);
      await p.collectSnapshot(src(m, { stream: "agent-1", kind: "meta" }), convert);
      p.finish();
      s.close();
    }
    const before = readIndex(root, "s1");
    const rowsOf = (r: string) => {
      const idx = readIndex(r, "s1");
      const out: Record<string, string[]> = {};
      for (const x of idx.files) (out[`${x.stream}/${x.kind}`] ??= []).push(...readLanded(r, "s1", x.seq).rows);
      return out;
    };
    const dest = join(srcDir, "..", "dest");
    const res = await repack(root, dest, { maxDeltaBytes: 6000 });
    expect(res.filesIn).toBe(before.files.length);
    expect(res.filesOut).toBeLessThan(before.files.length);
    expect(rowsOf(dest)).toEqual(rowsOf(root));
    const after = readIndex(dest, "s1");
    expect(after.files.filter((x) => x.kind === "meta")).toHaveLength(3);
    expect(verify(dest).problems.map(formatProblem)).toEqual([]);
    for (const x of after.files.filter((y) => y.kind === "transcript").slice(0, -1)) {
      const h = readLanded(dest, "s1", x.seq).header;
      expect(h.end_offset - h.first_offset).toBeLessThanOrEqual(6000);
    }
    // carried cursors keep collecting in the new root
    appendFileSync(f, jline("after"));
    const s = await openSession(dest, "s1");
    const p = s.beginPass();
    const o = await p.collectAppend(src(f), convert);
    p.finish();
    s.close();
    expect(o.landed).toHaveLength(1);
    expect(readLanded(dest, "s1", o.landed[0]!.seq).header.first_offset).toBe(Buffer.byteLength(all));
    expect(verify(dest).ok).toBe(true);
    await expect(repack(root, dest)).rejects.toMatchObject({ code: "Exists" });
  });
});

describe("sessions discovery no longer finds", () => {
  it("are checked once under their lock, again only after being found in between, never while discovery had a problem", async () => {
    const { root, srcDir } = setup();
    const f = join(srcDir, "gone.jsonl");
    writeFileSync(f, jline("a"));
    const s = await openSession(root, "lost");
    const p = s.beginPass();
    await p.collectAppend(src(f, { source: "gone.jsonl" }), convert);
    p.finish();
    s.close();
    unlinkSync(f);
    const resolve = (_id: string, source: string) => join(srcDir, source);
    const tracker = new LostSessionTracker();
    expect(await checkLostSessions(root, { found: new Set(), resolve, tracker, discoveryProblem: true })).toMatchObject({ skipped: true, gone: 0 });
    const held = await openSession(root, "lost");
    expect(await checkLostSessions(root, { found: new Set(), resolve, tracker })).toMatchObject({ retry: ["lost"], gone: 0 });
    held.close();
    expect(await checkLostSessions(root, { found: new Set(), resolve, tracker, include: () => false })).toMatchObject({ checked: [], gone: 0 });
    expect(await checkLostSessions(root, { found: new Set(), resolve, tracker })).toMatchObject({ checked: ["lost"], gone: 1 });
    expect(await checkLostSessions(root, { found: new Set(), resolve, tracker })).toMatchObject({ checked: [] });
    tracker.noteFound(["lost"]);
    expect(await checkLostSessions(root, { found: new Set(), resolve, tracker })).toMatchObject({ checked: ["lost"], gone: 0 });
    const st = status(root);
    expect(st).toMatchObject({ sessions: 1, streams: 1, landedFiles: 1, cursors: { source_gone: 1, active: 0, conflict: 0 }, conflicts: 0, locked: 0 });
    expect(readdirSync(join(root, "lost/streams/main")).filter((n) => n.endsWith(".sd"))).toHaveLength(1);
  });
});
