// pass.state: the golden vector, strict decoding, and sessionUnchanged believing a mark only while
// every cursor still says so (append at the file's end, snapshot with the same size and mtime,
// nothing landed past the mark, index and chain still there).
import { afterAll, describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { checkSession, confirmSource, decodePassState, encodePassState, isStoreError, openSession, readPassState, readPassStateSessions, sessionUnchanged, writePassState, type FoundSource, type SessionMark } from "../src/index.js";
import { capture, convert, jline, src } from "./helpers.js";
import { indexedSeq, indexStamp, lostToCheck, LostSessionTracker } from "../src/pass.js";

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
    expect(s.sessions.get("258c7280-ae70-4798-800f-63464d01a85d")!.sources[0]).toEqual({
      source: "claude-code:-home-marco-projects-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
      cursor: "streams/main/transcript.cursor", mode: "append", cursorStat: "3286244:459:1796180582827296573:1796180582831296573", sourceIno: 3286808, sourceSize: 39279,
    });
    expect(encodePassState(s)).toBe(text);
    // A pass.state from before cursor_stat: its marks decode (and encode back) without one, so the
    // next pass reads their cursors once and records their stats.
    const plain = v("pass-v1-plain.state");
    const p = decodePassState(plain, "pass.state");
    expect(p.sessions.get("258c7280-ae70-4798-800f-63464d01a85d")!.sources[0]).toEqual({
      source: "claude-code:-home-marco-projects-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
      cursor: "streams/main/transcript.cursor", mode: "append",
    });
    expect(encodePassState(p)).toBe(plain);
    for (const [bad, why] of [
      ["{", /x\.state: not JSON/],
      ['{"format":"other","schema":1}', /not a pass state/],
      ['{"format":"lake.pass-state","schema":2,"sessions":{},"lost_checked":[]}', /schema 2 is not supported/],
      ['{"format":"lake.pass-state","schema":1,"sessions":{"a":{"seq":-1,"chain":true,"sources":[]}},"lost_checked":[]}', /session a: expected/],
      ['{"format":"lake.pass-state","schema":1,"sessions":{"a":{"seq":1,"chain":true,"sources":[{"source":"s","cursor":"c","mode":"x"}]}},"lost_checked":[]}', /session a: a source without/],
      ['{"format":"lake.pass-state","schema":1,"sessions":{"a":{"seq":1,"chain":true,"sources":[{"source":"s","cursor":"c","mode":"append","cursor_stat":"1:2:3:4","source_ino":5}]}},"lost_checked":[]}', /session a: bad cursor_stat/],
      ['{"format":"lake.pass-state","schema":1,"sessions":{"a":{"seq":1,"chain":true,"sources":[{"source":"s","cursor":"c","mode":"append","cursor_stat":"1:2","source_ino":5,"source_size":6}]}},"lost_checked":[]}', /session a: bad cursor_stat/],
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

  it("readPassStateSessions: the ids readPassState has marks for, none without a file; a file that is not a pass state is Corrupt", () => {
    const root = tempDir("pass-sessions");
    expect(readPassStateSessions(root)).toEqual(new Set());
    writeFileSync(join(root, "pass.state"), v("pass.state"));
    expect(readPassStateSessions(root)).toEqual(new Set(readPassState(root).sessions.keys()));
    expect(readPassStateSessions(root).size).toBeGreaterThan(0);
    writeFileSync(join(root, "pass.state"), '{"format":"lake.pass-state","schema":2,"sessions":{},"lost_checked":[]}');
    try {
      readPassStateSessions(root);
      expect.unreachable();
    } catch (e) {
      expect(isStoreError(e) && e.code).toBe("Corrupt");
      expect((e as Error).message).toBe(`${join(root, "pass.state")}: pass state schema 2 is not supported`);
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
    // The pass's one listing of _conversations/ is believed instead of a check per session.
    expect(sessionUnchanged(root, "s1", { ...mk, chain: true }, found(), { conversations: new Set(["s1"]) })).toBe(true);
    expect(sessionUnchanged(root, "s1", { ...mk, chain: true }, found(), { conversations: new Set() })).toBe(false);
    // With discovery's inode the source is not stat'ed again: its size, mtime and inode are believed.
    const withIno = () => found().map((f) => ({ ...f, ino: statSync(f.path).ino }));
    expect(sessionUnchanged(root, "s1", mk, withIno())).toBe(true);
    expect(sessionUnchanged(root, "s1", mk, withIno().map((f, i) => (i === 0 ? { ...f, ino: f.ino + 1 } : f)))).toBe(false);
    expect(sessionUnchanged(root, "s1", mk, withIno().map((f, i) => (i === 0 ? { ...f, size: f.size + 1 } : f)))).toBe(false);
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

  it("a mark that took its cursors' stats is checked by stats alone, and a cursor replaced since is read again", async () => {
    const base = tempDir("pass-state-stat");
    const root = join(base, "root");
    mkdirSync(join(base, "src"), { recursive: true });
    const file = join(base, "src", "s.jsonl");
    writeFileSync(file, jline("u1") + jline("u2"));
    const srcA = src(file, { source: "t:s.jsonl" });
    const log = capture();
    const s = await openSession(root, "s1", { logger: log.logger });
    let mark: SessionMark;
    try {
      const p = s.beginPass();
      const a = await p.collectAppend(srcA, convert);
      const r = p.finish();
      const plain = { source: "t:s.jsonl", cursor: a.cursor!, mode: "append" as const };
      // Under the lock, after finish: the mark takes the cursor file's identity and what it says of the source.
      const confirmed = confirmSource(root, "s1", plain, r.seq);
      expect(confirmed).toMatchObject({ ...plain, sourceIno: statSync(file).ino, sourceSize: statSync(file).size });
      expect(confirmed.cursorStat).toMatch(/^\d+:\d+:\d+:\d+$/);
      // A seq below the cursor's last landed file, or a mark of another source: not confirmed.
      expect(confirmSource(root, "s1", plain, 0)).toEqual(plain);
      expect(confirmSource(root, "s1", { ...plain, source: "t:other" }, r.seq)).toEqual({ ...plain, source: "t:other" });
      mark = { seq: r.seq, chain: false, sources: [confirmed] };
    } finally {
      s.close();
    }
    const cursorFile = join(root, "s1", mark.sources[0]!.cursor);
    const found = (): FoundSource[] => [{ source: "t:s.jsonl", path: file, mode: "append", size: statSync(file).size, mtimeMs: statSync(file).mtimeMs }];
    // The stats and sizes survive the file.
    writePassState(root, { sessions: new Map([["s1", mark]]), lostChecked: new Set() });
    expect(readPassState(root).sessions.get("s1")).toEqual(mark);
    // Unchanged by stats alone: the mark already holds this cursor's stat, so nothing comes back to keep.
    const text = readFileSync(cursorFile, "utf8");
    const st = statSync(cursorFile);
    expect(checkSession(root, "s1", mark, found())).toEqual({ unchanged: true });
    // The same root written otherwise (relative, `..`, trailing or doubled slashes): the same files checked.
    const cwd = process.cwd();
    process.chdir(base);
    try {
      for (const r of ["root", "./root/", "root//", "x/../root", `${root}/`, `${base}//root`]) {
        expect(checkSession(r, "s1", mark, found()), r).toEqual({ unchanged: true });
        expect(checkSession(r, "s1", { ...mark, chain: true }, found()), r).toEqual({ unchanged: false });
      }
      process.chdir(root);
      expect(checkSession(".", "s1", mark, found())).toEqual({ unchanged: true });
      expect(checkSession("", "s1", mark, found())).toEqual({ unchanged: true });
    } finally {
      process.chdir(cwd);
    }
    // The source grows: the mark's size no longer matches.
    appendFileSync(file, jline("u3"));
    expect(checkSession(root, "s1", mark, found())).toEqual({ unchanged: false });
    // The cursor moved behind the mark's back to the new end (rewritten by rename: another inode):
    // it is read, believed, and the mark that comes back holds its new stat.
    const grown = text.replace(/^offset( +)\d+$/m, (_l, sp: string) => `offset${sp}${statSync(file).size}`);
    expect(grown).not.toBe(text);
    writeFileSync(cursorFile + ".new", grown);
    renameSync(cursorFile + ".new", cursorFile);
    expect(statSync(cursorFile).ino).not.toBe(st.ino);
    const again = checkSession(root, "s1", mark, found());
    expect(again.unchanged).toBe(true);
    expect(again.mark!.sources[0]).toMatchObject({ sourceSize: statSync(file).size });
    expect(again.mark!.sources[0]!.cursorStat).not.toBe(mark.sources[0]!.cursorStat);
    expect(checkSession(root, "s1", again.mark, found())).toEqual({ unchanged: true });
    // A cursor put in conflict (rewritten): read, and not unchanged whatever its stat was.
    writeFileSync(cursorFile + ".new", grown.replace(/^state( +)active$/m, (_l, sp: string) => `state${sp}conflict`));
    renameSync(cursorFile + ".new", cursorFile);
    expect(checkSession(root, "s1", again.mark, found())).toEqual({ unchanged: false });
    // A mark without stats (an older pass.state) reads the cursor and comes back with them.
    writeFileSync(cursorFile + ".new", grown);
    renameSync(cursorFile + ".new", cursorFile);
    const old: SessionMark = { ...mark, sources: [{ source: "t:s.jsonl", cursor: mark.sources[0]!.cursor, mode: "append" }] };
    const upgraded = checkSession(root, "s1", old, found());
    expect(upgraded.unchanged).toBe(true);
    expect(upgraded.mark!.sources[0]!.cursorStat).toMatch(/^\d+:/);
  });

  it("indexedSeq is index.state's indexed_seq (the watermark) and indexStamp its stat: both move when files are indexed, and are undefined without an index", async () => {
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
    const stamp = indexStamp(root, "s1");
    expect(stamp).toMatch(/^\d+:\d+:\d+:\d+$/);
    // Nothing new: the watermark stays, and so does index.state (its stamp).
    await pass();
    expect(indexedSeq(root, "s1")).toBe(1);
    expect(indexStamp(root, "s1")).toBe(stamp);
    appendFileSync(file, jline("u2"));
    expect((await pass()).seq).toBe(2);
    expect(indexedSeq(root, "s1")).toBe(2);
    expect(indexStamp(root, "s1")).not.toBe(stamp);
    // No index (deleted, as clean does): undefined, until a pass rebuilds it to the same watermark.
    rmSync(join(root, "s1", "index"), { recursive: true });
    expect(indexedSeq(root, "s1")).toBeUndefined();
    expect(indexStamp(root, "s1")).toBeUndefined();
    await pass();
    expect(indexedSeq(root, "s1")).toBe(2);
    // An index.state without this schema gives no watermark (the reader then reads the index, which derives it).
    writeFileSync(join(root, "s1", "index", "index.state"), "not key value\n");
    expect(indexedSeq(root, "s1")).toBeUndefined();
  });

  it("lostToCheck: the root's sessions discovery did not find and the tracker has not checked", () => {
    const root = join(tempDir("lost"), "root");
    for (const id of ["a", "b", "c", "_forget", ".tmp", "labels"]) mkdirSync(join(root, id), { recursive: true });
    // Neither a file nor a link to a directory is a session (the root is listed by name, and a name
    // not found is looked at without following a link).
    writeFileSync(join(root, "pass.state"), "{}");
    symlinkSync(join(root, "a"), join(root, "d"));
    const tracker = new LostSessionTracker(["b"]);
    expect(lostToCheck(root, new Set(["a"]), tracker)).toEqual(["c"]);
    // Found again, b is checked again once it is lost again.
    expect(lostToCheck(root, new Set(["a", "b"]), tracker)).toEqual(["c"]);
    expect(lostToCheck(root, new Set(["a"]), tracker)).toEqual(["b", "c"]);
  });
});
