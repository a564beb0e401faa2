// pass.state: the golden vector, strict decoding, and sessionUnchanged believing a mark only while
// every cursor still says so (append at the file's end, snapshot with the same size and mtime,
// nothing landed past the mark, index and chain still there).
import { afterAll, describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { decodePassState, encodePassState, isStoreError, openSession, readPassState, sessionUnchanged, writePassState, type FoundSource, type SessionMark } from "../src/index.js";
import { capture, convert, jline, src } from "./helpers.js";
import { indexedSeq, lostToCheck, LostSessionTracker } from "../src/pass.js";

afterAll(cleanupTempDirs);

const v = (name: string) => readFileSync(new URL(`./vectors/${name}`, import.meta.url), "utf8");

describe("pass.state", () => {
  it("golden vector decodes and encodes back to the same bytes; bad input is Corrupt naming the file", () => {
    const text = v("pass.state");
    const s = decodePassState(text, "pass.state");
    expect(s.lostChecked).toEqual(new Set(["d6e0bada-1959-4eec-a9d2-0bfade768d8f"]));
    expect(s.sessions.get("258c7280-ae70-4798-800f-63464d01a85d")).toMatchObject({ seq: 3, chain: true });
    expect(s.sessions.get("258c7280-ae70-4798-800f-63464d01a85d")!.sources[1]).toEqual({
      source: "claude-code:-home-marco-projects-spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.meta.json",
      cursor: "streams/a881341/meta.cursor", mode: "snapshot", size: 61, mtimeMs: 1770764274764.5,
    });
    expect(encodePassState(s)).toBe(text);
    for (const [bad, why] of [
      ["{", /x\.state: not JSON/],
      ['{"format":"other","schema":1}', /not a pass state/],
      ['{"format":"lake.pass-state","schema":2,"sessions":{},"lost_checked":[]}', /schema 2 is not supported/],
      ['{"format":"lake.pass-state","schema":1,"sessions":{"a":{"seq":-1,"chain":true,"sources":[]}},"lost_checked":[]}', /session a: expected/],
      ['{"format":"lake.pass-state","schema":1,"sessions":{"a":{"seq":1,"chain":true,"sources":[{"source":"s","cursor":"c","mode":"x"}]}},"lost_checked":[]}', /session a: a source without/],
    ] as const) {
      try {
        decodePassState(bad, "x.state");
        expect.unreachable();
      } catch (e) {
        expect(isStoreError(e) && e.code).toBe("Corrupt");
        expect((e as Error).message).toMatch(why);
      }
    }
  });

  it("sessionUnchanged: true only while cursors, sizes, index and chain agree with the mark", async () => {
    const base = tempDir("pass-state");
    const root = join(base, "root");
    mkdirSync(join(base, "src"), { recursive: true });
    const file = join(base, "src", "s.jsonl");
    const meta = join(base, "src", "m.json");
    writeFileSync(file, jline("u1") + jline("u2"));
    writeFileSync(meta, '{"agentType":"x"}\n');
    const srcA = src(file, { source: "t:s.jsonl" });
    const srcM = src(meta, { source: "t:m.json", kind: "meta" });
    const log = capture();
    const run = async () => {
      const s = await openSession(root, "s1", { logger: log.logger });
      try {
        const p = s.beginPass();
        const a = await p.collectAppend(srcA, convert);
        const m = await p.collectSnapshot(srcM, (lines) => convert(lines, { sessionId: "s1", source: srcM }));
        const r = p.finish();
        return { a, m, r };
      } finally {
        s.close();
      }
    };
    const { a, m, r } = await run();
    expect(a.cursor).toBe("streams/main/transcript.cursor");
    expect(m.cursor).toBe("streams/main/meta.cursor");
    expect(r.seq).toBe(2);
    const found = (): FoundSource[] => [file, meta].map((p, i) => ({ source: i ? "t:m.json" : "t:s.jsonl", path: p, mode: i ? "snapshot" : "append", size: statSync(p).size, mtimeMs: statSync(p).mtimeMs }));
    const mark = (): SessionMark => ({ seq: r.seq, chain: false, sources: [{ source: "t:s.jsonl", cursor: a.cursor!, mode: "append" }, { source: "t:m.json", cursor: m.cursor!, mode: "snapshot", size: statSync(meta).size, mtimeMs: statSync(meta).mtimeMs }] });
    const mk = mark();
    expect(sessionUnchanged(root, "s1", mk, found())).toBe(true);
    // Round trip through the file.
    writePassState(root, { sessions: new Map([["s1", mk]]), lostChecked: new Set() });
    expect(sessionUnchanged(root, "s1", readPassState(root).sessions.get("s1"), found())).toBe(true);
    // No mark, another source set, a chain the mark says exists but does not.
    expect(sessionUnchanged(root, "s1", undefined, found())).toBe(false);
    expect(sessionUnchanged(root, "s1", mk, found().slice(0, 1))).toBe(false);
    expect(sessionUnchanged(root, "s1", { ...mk, chain: true }, found())).toBe(false);
    // The append source grows: not unchanged; after a pass and a new mark, unchanged again.
    appendFileSync(file, jline("u3"));
    expect(sessionUnchanged(root, "s1", mk, found())).toBe(false);
    const second = await run();
    expect(second.r.seq).toBe(3);
    // The cursor now holds a landed file past the old mark.
    expect(sessionUnchanged(root, "s1", mk, found())).toBe(false);
    const mk2 = mark();
    const mk3 = { ...mk2, seq: second.r.seq };
    expect(sessionUnchanged(root, "s1", mk3, found())).toBe(true);
    // The snapshot rewritten with the same size: mtime differs from the mark.
    writeFileSync(meta, '{"agentType":"y"}\n');
    const later = Date.now() / 1000 + 5;
    utimesSync(meta, later, later);
    expect(sessionUnchanged(root, "s1", mk3, found())).toBe(false);
    // The index deleted (derived state): not unchanged.
    const mk4: SessionMark = { ...mark(), seq: 3 };
    expect(sessionUnchanged(root, "s1", mk4, found())).toBe(true);
    rmSync(join(root, "s1", "index"), { recursive: true });
    expect(sessionUnchanged(root, "s1", mk4, found())).toBe(false);
  });

  it("indexedSeq is index.state's indexed_seq (the watermark): it moves when files are indexed, and is undefined without an index", async () => {
    const base = tempDir("watermark");
    const root = join(base, "root");
    mkdirSync(join(base, "src"), { recursive: true });
    const file = join(base, "src", "s.jsonl");
    writeFileSync(file, jline("u1"));
    const srcA = src(file, { source: "t:s.jsonl" });
    const pass = async () => {
      const s = await openSession(root, "s1", { logger: capture().logger });
      try {
        const p = s.beginPass();
        await p.collectAppend(srcA, convert);
        return p.finish();
      } finally {
        s.close();
      }
    };
    expect((await pass()).seq).toBe(1);
    expect(indexedSeq(root, "s1")).toBe(1);
    // Nothing new: the watermark stays.
    await pass();
    expect(indexedSeq(root, "s1")).toBe(1);
    appendFileSync(file, jline("u2"));
    expect((await pass()).seq).toBe(2);
    expect(indexedSeq(root, "s1")).toBe(2);
    // No index (deleted, as clean does): undefined, until a pass rebuilds it to the same watermark.
    rmSync(join(root, "s1", "index"), { recursive: true });
    expect(indexedSeq(root, "s1")).toBeUndefined();
    await pass();
    expect(indexedSeq(root, "s1")).toBe(2);
    // An index.state without this schema gives no watermark (the reader then reads the index, which derives it).
    writeFileSync(join(root, "s1", "index", "index.state"), "not key value\n");
    expect(indexedSeq(root, "s1")).toBeUndefined();
  });

  it("lostToCheck: the root's sessions discovery did not find and the tracker has not checked", () => {
    const root = join(tempDir("lost"), "root");
    for (const id of ["a", "b", "c", "_forget", ".tmp"]) mkdirSync(join(root, id), { recursive: true });
    const tracker = new LostSessionTracker(["b"]);
    expect(lostToCheck(root, new Set(["a"]), tracker)).toEqual(["c"]);
    // Found again, b is checked again once it is lost again.
    expect(lostToCheck(root, new Set(["a", "b"]), tracker)).toEqual(["c"]);
    expect(lostToCheck(root, new Set(["a"]), tracker)).toEqual(["b", "c"]);
  });
});
