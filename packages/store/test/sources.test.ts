// What a source is before it is read, two files of one stream, a refused first window, carried
// state, and resolving a conflict: the store's side of a pass that one bad source never stops.
import { afterAll, describe, expect, it } from "vitest";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { decodeCursor, listConflicts, openSession, readIndex, verify, type AppendCursor, type CarriedState, type SourceRef } from "../src/index.js";
import { capture, convert, jline, src } from "./helpers.js";

afterAll(cleanupTempDirs);

async function pass(root: string, sources: SourceRef[], sid = "s1") {
  const log = capture();
  const s = await openSession(root, sid, { logger: log.logger });
  try {
    const p = s.beginPass();
    const outcomes = [];
    for (const x of sources) outcomes.push(await p.collectAppend(x, convert));
    return { outcomes, summary: p.finish() };
  } finally {
    s.close();
  }
}

const cursorAt = (root: string, rel: string, sid = "s1") => decodeCursor(readFileSync(join(root, sid, rel), "utf8"), rel) as AppendCursor;

describe("sources a pass cannot take", () => {
  it("a FIFO, a socket, a device, a dangling link and a link loop are problems of their own; the good source lands", async () => {
    const base = tempDir("store-src");
    const root = join(base, "root");
    const d = join(base, "src");
    mkdirSync(d);
    writeFileSync(join(d, "good.jsonl"), jline("u1"));
    spawnSync("mkfifo", [join(d, "fifo.jsonl")]);
    const server = createServer();
    await new Promise<void>((r) => server.listen(join(d, "sock.jsonl"), r));
    symlinkSync("/dev/null", join(d, "dev.jsonl"));
    symlinkSync(join(d, "none"), join(d, "dangling.jsonl"));
    symlinkSync(join(d, "loop-b"), join(d, "loop-a"));
    symlinkSync(join(d, "loop-a"), join(d, "loop-b"));
    try {
      const names = ["fifo.jsonl", "sock.jsonl", "dev.jsonl", "dangling.jsonl", "loop-a", "good.jsonl"];
      const r = await pass(root, names.map((n, i) => src(join(d, n), { stream: `s${i}` })));
      expect(r.outcomes.map((o) => [o.status, o.reason])).toEqual([
        ["problem", "not a regular file (a FIFO): never opened"],
        ["problem", "not a regular file (a socket): never opened"],
        ["problem", "not a regular file (a device): never opened"],
        ["problem", "dangling symbolic link (its target does not exist)"],
        ["problem", "symbolic link loop (ELOOP)"],
        ["landed", undefined],
      ]);
      expect(r.summary.problems.map((p) => p.file)).toEqual(names.slice(0, 5).map((n) => join(d, n)));
      expect(r.summary.failed).toBe(true);
      expect(r.summary.landed).toBe(1);
    } finally {
      server.close();
    }
  });

  it("a refused first window lands nothing, saves no cursor, and leaves no session directory", async () => {
    const base = tempDir("store-accept");
    const root = join(base, "root");
    const f = join(base, "x.jsonl");
    writeFileSync(f, "not json\nnor this\n");
    const accept = (recs: readonly { kind: string }[]) => (recs.some((r) => r.kind !== "unknown") ? undefined : "not a test transcript");
    const a = await pass(root, [src(f, { accept })], "x");
    expect(a.outcomes[0]).toMatchObject({ status: "rejected", reason: "not a test transcript" });
    expect(existsSync(join(root, "x"))).toBe(false);
    writeFileSync(f, jline("u1"));
    const b = await pass(root, [src(f, { accept })], "x");
    expect(b.outcomes[0]!.status).toBe("landed");
  });
});

describe("two files of one stream", () => {
  it("each gets its own cursor whatever the order; records already landed are re-lands", async () => {
    const base = tempDir("store-two");
    const root = join(base, "root");
    mkdirSync(join(base, "a"));
    mkdirSync(join(base, "b"));
    const A = join(base, "a", "s.jsonl");
    const B = join(base, "b", "s.jsonl");
    writeFileSync(A, jline("u1") + jline("u2"));
    copyFileSync(A, B);
    const r1 = await pass(root, [src(A, { source: "a/s.jsonl" }), src(B, { source: "b/s.jsonl" })]);
    expect(r1.outcomes.map((o) => o.landed.map((l) => l.rel.split("/").pop()!.split("-")[0]))).toEqual([["transcript"], ["transcript_2"]]);
    expect(cursorAt(root, "streams/main/transcript.cursor").source).toBe("a/s.jsonl");
    expect(cursorAt(root, "streams/main/transcript_2.cursor").source).toBe("b/s.jsonl");
    appendFileSync(B, jline("u3"));
    // The other order: each source still finds its own cursor.
    const r2 = await pass(root, [src(B, { source: "b/s.jsonl" }), src(A, { source: "a/s.jsonl" })]);
    expect(r2.outcomes.map((o) => o.status)).toEqual(["landed", "unchanged"]);
    const idx = readIndex(root, "s1");
    expect(idx.entries.filter((e) => !e.duplicate).map((e) => e.record_id)).toEqual(["u1", "u2", "u3"]);
    expect(idx.entries.filter((e) => e.duplicate).map((e) => e.record_id)).toEqual(["u1", "u2"]);
    expect(verify(root).ok).toBe(true);
  });
});

describe("carried state and resolving conflicts", () => {
  it("carried state is restored at the cursor's offset and saved with every window", async () => {
    const base = tempDir("store-carry");
    const root = join(base, "root");
    const f = join(base, "s.jsonl");
    writeFileSync(f, jline("u1"));
    const seen: Array<[string | undefined, number]> = [];
    let n = 0;
    const carry: CarriedState = { restore: (s, o) => void seen.push([s, o]), save: (o) => JSON.stringify({ n: ++n, o }) };
    await pass(root, [src(f, { carry })]);
    const c1 = cursorAt(root, "streams/main/transcript.cursor");
    expect(c1.adapter_state).toBe(JSON.stringify({ n: 1, o: c1.offset }));
    appendFileSync(f, jline("u2"));
    await pass(root, [src(f, { carry })]);
    expect(seen).toEqual([[undefined, 0], [JSON.stringify({ n: 1, o: c1.offset }), c1.offset]]);
  });

  it("a conflict keeps its reason; listConflicts lists it; resolveConflict is the one way out, by either mode", async () => {
    const base = tempDir("store-resolve");
    const root = join(base, "root");
    const f = join(base, "s.jsonl");
    writeFileSync(f, jline("u1") + jline("u2"));
    await pass(root, [src(f)]);
    truncateSync(f, 5);
    const r = await pass(root, [src(f)]);
    expect(r.outcomes[0]!.status).toBe("conflict");
    const [c] = listConflicts(root, { resolve: () => f });
    expect(c).toMatchObject({ session: "s1", cursor: "streams/main/transcript.cursor", path: f, kind: "append", reason: expect.stringMatching(/^source is shorter than the cursor's offset/) });
    const s = await openSession(root, "s1");
    try {
      expect(() => s.resolveConflict(c!.cursor, "continue-from-offset", f)).toThrow(/shorter than the cursor's offset .* only reread-from-start applies/);
      const saved = s.resolveConflict(c!.cursor, "reread-from-start") as AppendCursor;
      expect(saved).toMatchObject({ state: "active", offset: 0, ord: 0 });
      expect(saved.conflict_reason).toBeUndefined();
      expect(() => s.resolveConflict(c!.cursor, "reread-from-start")).toThrow(/not in conflict/);
    } finally {
      s.close();
    }
    expect(listConflicts(root)).toEqual([]);
    writeFileSync(f, jline("u1") + jline("u2") + jline("u3"));
    const again = await pass(root, [src(f)]);
    expect(again.outcomes[0]!.status).toBe("landed");
    expect(readIndex(root, "s1").entries.filter((e) => e.duplicate).map((e) => e.record_id)).toEqual(["u1", "u2"]);
    expect(verify(root).ok).toBe(true);
  });

  it("verify of a root that does not exist throws NotFound", () => {
    expect(() => verify(join(tempDir("store-none"), "nope"))).toThrow(expect.objectContaining({ code: "NotFound" }));
  });
});
