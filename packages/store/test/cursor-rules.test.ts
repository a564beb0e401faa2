import { afterAll, describe, expect, it } from "vitest";
import { appendFileSync, copyFileSync, readFileSync, readdirSync, renameSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { openSession, readIndex, decodeCursor, verify, readLanded, status, listSessions, type AppendCursor, type SessionOptions, type SourceRef } from "../src/index.js";
import { capture, convert, jline, src } from "./helpers.js";

afterAll(cleanupTempDirs);

function setup() {
  const base = tempDir("store-cursor");
  const root = join(base, "root");
  const srcDir = join(base, "src");
  mkdirSync(srcDir, { recursive: true });
  return { root, srcDir, file: join(srcDir, "s.jsonl") };
}

async function pass(root: string, sources: SourceRef[], opts: SessionOptions = {}, sid = "s1") {
  const log = capture();
  const s = await openSession(root, sid, { logger: log.logger, ...opts });
  try {
    const p = s.beginPass();
    const outcomes = [];
    for (const x of sources) outcomes.push(await p.collectAppend(x, convert));
    const summary = p.finish();
    return { outcomes, summary, log: log.lines };
  } finally {
    s.close();
  }
}

function cursor(root: string, sid = "s1", stream = "main", kind = "transcript"): AppendCursor {
  const p = join(root, sid, "streams", stream, `${kind}.cursor`);
  return decodeCursor(readFileSync(p, "utf8"), p) as AppendCursor;
}

function recordIds(root: string, sid = "s1"): string[] {
  return readIndex(root, sid).entries.filter((e) => !e.duplicate).map((e) => e.record_id ?? "?");
}

describe("append cursor rules on real files", () => {
  it("append: each pass lands only the new complete lines, cursor fields follow", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a") + jline("b"));
    const r1 = await pass(root, [src(file)]);
    expect(r1.outcomes[0]!.status).toBe("landed");
    let c = cursor(root);
    expect(c.offset).toBe(statSync(file).size);
    expect(c.ord).toBe(2);
    expect(c.last_uuid).toBe("b");
    expect(c.state).toBe("active");
    expect(c.last_seq).toBe(1);
    appendFileSync(file, jline("c"));
    const r2 = await pass(root, [src(file)]);
    expect(r2.outcomes[0]!.landed).toHaveLength(1);
    c = cursor(root);
    expect(c.ord).toBe(3);
    expect(c.last_seq).toBe(2);
    expect(recordIds(root)).toEqual(["a", "b", "c"]);
    const f = readLanded(root, "s1", 2);
    expect(f.header.first_offset).toBe(Buffer.byteLength(jline("a") + jline("b")));
    expect(f.header.first_line).toBe(3);
    expect(f.header.last_line).toBe(3);
    expect(f.rel).toMatch(/^streams\/main\/transcript-\d{8}T\d{6}\.\d{9}Z-000002\.sd$/);
    expect(statSync(join(root, "s1", f.rel)).mode & 0o777).toBe(0o444);
    // unchanged: nothing read, nothing landed, cursor file untouched
    const before = readFileSync(join(root, "s1/streams/main/transcript.cursor"), "utf8");
    const r3 = await pass(root, [src(file)]);
    expect(r3.outcomes[0]!.status).toBe("unchanged");
    expect(readFileSync(join(root, "s1/streams/main/transcript.cursor"), "utf8")).toBe(before);
    expect(verify(root).ok).toBe(true);
  });

  it("a change is judged by size, never by mtime", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a"));
    await pass(root, [src(file)]);
    const { utimesSync } = await import("node:fs");
    utimesSync(file, new Date(2001, 1, 1), new Date(2001, 1, 1));
    const r = await pass(root, [src(file)]);
    expect(r.outcomes[0]!.status).toBe("unchanged");
  });

  it("truncate: shorter than offset is a conflict, named once, then only counted", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a") + jline("b"));
    await pass(root, [src(file)]);
    truncateSync(file, 5);
    const r = await pass(root, [src(file)]);
    expect(r.outcomes[0]!.status).toBe("conflict");
    expect(r.outcomes[0]!.reason).toMatch(/shorter/);
    expect(r.log.join("\n")).toContain(file);
    expect(r.summary.conflicts).toBe(1);
    expect(r.summary.failed).toBe(true);
    expect(cursor(root).state).toBe("conflict");
    appendFileSync(file, "x".repeat(200) + "\n");
    const r2 = await pass(root, [src(file)]);
    expect(r2.outcomes[0]!.status).toBe("in_conflict");
    expect(r2.log).toEqual([]);
    expect(r2.summary.conflicts).toBe(1);
    expect(r2.summary.newConflicts).toEqual([]);
  });

  it("rewrite inside the 1 MiB window is a conflict; beyond it is not caught", async () => {
    const { root, file } = setup();
    // ~1.5 MiB of lines: the first ~0.5 MiB lies outside the window before offset.
    let body = "";
    for (let i = 0; body.length < 1.5 * 1024 * 1024; i++) body += jline(`u${i}`, "p".repeat(1000));
    writeFileSync(file, body);
    await pass(root, [src(file)]);
    const c0 = cursor(root);
    expect(c0.offset).toBe(body.length);
    // beyond the window: change a byte at position 10 (same size)
    const far = Buffer.from(body);
    far[20] = far[20] === 0x70 ? 0x71 : 0x70;
    writeFileSync(file, far);
    appendFileSync(file, jline("after-far"));
    const r1 = await pass(root, [src(file)]);
    expect(r1.outcomes[0]!.status).toBe("landed");
    // inside the window: change a byte 100 bytes before offset
    const off = cursor(root).offset;
    const now = readFileSync(file);
    now[off - 100] = now[off - 100] === 0x41 ? 0x42 : 0x41;
    writeFileSync(file, now);
    appendFileSync(file, jline("after-near"));
    const r2 = await pass(root, [src(file)]);
    expect(r2.outcomes[0]!.status).toBe("conflict");
    expect(r2.outcomes[0]!.reason).toMatch(/tail_sha256/);
    expect(recordIds(root)).not.toContain("after-near");
  });

  it("inode change with the same bytes continues and takes the new ino; without a tail digest it is a conflict", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a"));
    await pass(root, [src(file)]);
    const ino0 = cursor(root).ino;
    copyFileSync(file, file + ".new");
    renameSync(file + ".new", file);
    expect(statSync(file).ino).not.toBe(ino0);
    const r = await pass(root, [src(file)]);
    expect(r.outcomes[0]!.status).toBe("unchanged");
    expect(cursor(root).ino).toBe(statSync(file).ino);
    expect(cursor(root).state).toBe("active");
    appendFileSync(file, jline("b"));
    await pass(root, [src(file)]);
    expect(recordIds(root)).toEqual(["a", "b"]);
    // a cursor without tail_sha256: a new inode is a conflict
    const cp = join(root, "s1/streams/main/transcript.cursor");
    writeFileSync(cp, readFileSync(cp, "utf8").split("\n").filter((l) => !l.startsWith("tail_sha256")).join("\n"));
    copyFileSync(file, file + ".new");
    renameSync(file + ".new", file);
    const r2 = await pass(root, [src(file)]);
    expect(r2.outcomes[0]!.status).toBe("conflict");
    expect(r2.outcomes[0]!.reason).toMatch(/no tail digest/);
  });

  it("dev is saved but never read back", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a"));
    await pass(root, [src(file)]);
    const cp = join(root, "s1/streams/main/transcript.cursor");
    const text = readFileSync(cp, "utf8").replace(/^dev +\d+$/m, "dev           12345");
    writeFileSync(cp, text);
    const r = await pass(root, [src(file)]);
    expect(r.outcomes[0]!.status).toBe("unchanged");
    expect(readFileSync(cp, "utf8")).toBe(text); // not refreshed when nothing lands and ino is unchanged
  });

  it("source deleted → source_gone; restored with every byte → active and continues; an older shorter copy → conflict in the same pass", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a") + jline("b"));
    await pass(root, [src(file)]);
    const saved = readFileSync(file);
    unlinkSync(file);
    const r1 = await pass(root, [src(file)]);
    expect(r1.outcomes[0]!.status).toBe("gone");
    expect(cursor(root).state).toBe("source_gone");
    expect(readIndex(root, "s1").entries).toHaveLength(2); // landed files stay
    writeFileSync(file, Buffer.concat([saved, Buffer.from(jline("c"))]));
    const r2 = await pass(root, [src(file)]);
    expect(r2.outcomes[0]!.reactivated).toBe(true);
    expect(r2.outcomes[0]!.status).toBe("landed");
    expect(cursor(root).state).toBe("active");
    expect(recordIds(root)).toEqual(["a", "b", "c"]);
    unlinkSync(file);
    await pass(root, [src(file)]);
    writeFileSync(file, jline("a")); // older, shorter copy
    const r3 = await pass(root, [src(file)]);
    expect(r3.outcomes[0]!.reactivated).toBe(true);
    expect(r3.outcomes[0]!.status).toBe("conflict");
  });

  it("an unterminated last line waits until it is complete", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a") + '{"type":"user","uuid":"b"');
    const r1 = await pass(root, [src(file)]);
    expect(r1.outcomes[0]!.status).toBe("landed");
    expect(recordIds(root)).toEqual(["a"]);
    const r2 = await pass(root, [src(file)]);
    expect(r2.outcomes[0]!.status).toBe("waiting");
    appendFileSync(file, "}\n");
    await pass(root, [src(file)]);
    expect(recordIds(root)).toEqual(["a", "b"]);
    expect(cursor(root).offset).toBe(statSync(file).size);
  });

  it("a torn last line followed by an append: the fragment lands as unknown bytes, the next line as its record", async () => {
    const { root, file } = setup();
    const torn = '{"type":"user","uuid":"b","text":"a {nested} half';
    writeFileSync(file, jline("a") + torn);
    await pass(root, [src(file)]);
    expect((await pass(root, [src(file)])).outcomes[0]!.status).toBe("waiting");
    // The writer died mid-line; the next one appends a whole line after the fragment.
    appendFileSync(file, jline("c", "with {braces} inside", { meta: { deep: [{ x: 1 }] } }) + jline("d"));
    const r = await pass(root, [src(file)]);
    expect(r.outcomes[0]!.status).toBe("landed");
    expect(recordIds(root)).toEqual(["a", "?", "c", "d"]);
    const landed = readLanded(root, "s1", 2);
    expect(landed.header).toMatchObject({ first_line: 2, last_line: 3, records: 3, first_offset: Buffer.byteLength(jline("a")) });
    const [frag, c] = landed.rows.map((t) => JSON.parse(t) as Record<string, unknown>);
    expect(frag).toMatchObject({ kind: "unknown", raw: torn, source_offset: Buffer.byteLength(jline("a")), source_line: 2 });
    expect(c).toMatchObject({ record_id: "c", source_offset: Buffer.byteLength(jline("a") + torn), source_line: 2 });
    expect(cursor(root)).toMatchObject({ offset: statSync(file).size, ord: 3 });
    expect(verify(root)).toMatchObject({ ok: true, problems: [] });
    // A line that is not JSON and ends in no complete object stays one unknown record.
    appendFileSync(file, 'not json {"half": \n');
    await pass(root, [src(file)]);
    expect(JSON.parse(readLanded(root, "s1", 3).rows[0]!)).toMatchObject({ kind: "unknown", raw: 'not json {"half": ' });
    expect(readLanded(root, "s1", 3).rows).toHaveLength(1);
  });

  it("status names each pending source and why; labels/, fleet/ and watch.lock/ in the root are not sessions", async () => {
    const { root, srcDir, file } = setup();
    const other = join(srcDir, "t.jsonl");
    writeFileSync(file, jline("a"));
    writeFileSync(other, jline("x"));
    await pass(root, [src(file)]);
    await pass(root, [src(other)], {}, "s2");
    appendFileSync(file, jline("b") + '{"type":"user"');
    appendFileSync(other, '{"type":"user","uuid":"y"');
    mkdirSync(join(root, "labels"), { recursive: true });
    writeFileSync(join(root, "labels", "labels.ndjson"), "");
    mkdirSync(join(root, "fleet", "sessions"), { recursive: true });
    // watch's directory lease and what a killed claimer leaves beside it
    mkdirSync(join(root, "watch.lock"));
    mkdirSync(join(root, ".watch.lock.prep-0a1b2c3d4e5f"));
    const st = status(root, { resolve: (_id, source) => join(srcDir, source.split("/").pop()!) });
    expect(listSessions(root)).toEqual(["s1", "s2"]);
    expect(st.sessions).toBe(2);
    expect(st.pending).toBe(2);
    expect(st.pendingSources).toEqual([
      { session: "s1", source: src(file).source, path: file, bytes: Buffer.byteLength(jline("b") + '{"type":"user"'), reason: "new-lines" },
      { session: "s2", source: src(other).source, path: other, bytes: Buffer.byteLength('{"type":"user","uuid":"y"'), reason: "partial-line" },
    ]);
    await expect(openSession(root, "labels")).rejects.toMatchObject({ code: "InvalidArgument" });
    await expect(openSession(root, "watch.lock")).rejects.toMatchObject({ code: "InvalidArgument" });
  });

  it("a 3 MiB single line is read whole past the 2 MiB budget", async () => {
    const { root, file } = setup();
    const big = jline("big", "z".repeat(3 * 1024 * 1024));
    writeFileSync(file, jline("a") + big + jline("c"));
    const r = await pass(root, [src(file)]);
    expect(r.outcomes[0]!.status).toBe("landed");
    expect(recordIds(root)).toEqual(["a", "big", "c"]);
    const files = readIndex(root, "s1").files;
    expect(files.length).toBe(3); // a | big (one window over budget) | c
    const f2 = readLanded(root, "s1", files[1]!.seq);
    expect(f2.header.end_offset - f2.header.first_offset).toBe(Buffer.byteLength(big));
    expect(JSON.parse(f2.rows[0]!).text.length).toBe(3 * 1024 * 1024);
  });

  it("windows are cut at the last complete newline under max_delta_bytes; over the window limit the source is pending", async () => {
    const { root, file } = setup();
    let body = "";
    for (let i = 0; i < 100; i++) body += jline(`u${i}`, "q".repeat(80));
    writeFileSync(file, body);
    const r = await pass(root, [src(file)], { maxDeltaBytes: 1000, maxWindows: 3 });
    expect(r.outcomes[0]!.status).toBe("pending");
    expect(r.outcomes[0]!.landed).toHaveLength(3);
    expect(r.summary.pending).toBe(1);
    expect(r.summary.failed).toBe(true);
    for (const l of r.outcomes[0]!.landed) expect(l.bytes).toBeGreaterThan(0);
    const c = cursor(root);
    expect(body.slice(0, c.offset).endsWith("\n")).toBe(true);
    expect(c.offset).toBeLessThanOrEqual(3000);
    const r2 = await pass(root, [src(file)], { maxDeltaBytes: 1_000_000 });
    expect(r2.outcomes[0]!.status).toBe("landed");
    expect(recordIds(root)).toHaveLength(100);
  });

  it("a line that is not JSON lands as an unknown record keeping its bytes", async () => {
    const { root, file } = setup();
    const bad = Buffer.from([0x6e, 0x6f, 0x74, 0x20, 0xff, 0xfe, 0x6a]); // not UTF-8 either
    writeFileSync(file, Buffer.concat([Buffer.from(jline("a") + "not json at all\n"), bad, Buffer.from("\n" + jline("b"))]));
    const s = await openSession(root, "s1", { maskUnknown: (t) => ({ text: t.replace("json", "****"), rules: ["r1"] }) });
    const p = s.beginPass();
    await p.collectAppend(src(file), convert);
    p.finish();
    s.close();
    const f = readLanded(root, "s1", 1);
    const recs = f.rows.map((r) => JSON.parse(r));
    expect(recs.map((r) => r.kind)).toEqual(["user", "unknown", "unknown", "user"]);
    expect(recs[1].raw).toBe("not **** at all");
    expect(recs[1].redaction_rules).toEqual(["r1"]);
    expect(Buffer.from(recs[2].raw, "base64")).toEqual(bad);
    expect(JSON.parse(recs[2].attrs)).toEqual({ raw_encoding: "base64" });
    expect(recs[1].source_line).toBe(2);
  });

  it("pruned sources: pruneUnseen sets source_gone only on active cursors whose file is gone", async () => {
    const { root, srcDir } = setup();
    const a = join(srcDir, "a.jsonl");
    const b = join(srcDir, "b.jsonl");
    writeFileSync(a, jline("a"));
    writeFileSync(b, jline("b"));
    await pass(root, [src(a, { stream: "main" }), src(b, { stream: "agent1" })]);
    rmSync(b);
    const s = await openSession(root, "s1");
    const p = s.beginPass();
    await p.collectAppend(src(a, { stream: "main" }), convert);
    const resolve = (source: string) => (source.startsWith("elsewhere/") ? undefined : join(srcDir, source.split("/").pop()!));
    expect(p.pruneUnseen(resolve)).toBe(1);
    p.finish();
    s.close();
    expect(cursor(root, "s1", "agent1").state).toBe("source_gone");
    expect(cursor(root, "s1", "main").state).toBe("active");
    expect(readdirSync(join(root, "s1/streams/agent1")).filter((n) => n.endsWith(".sd"))).toHaveLength(1);
  });
});
