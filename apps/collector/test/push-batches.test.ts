// push sends a session in batches of its landed files (PushOptions.batchBytes): each batch a
// segment per runtime, the directory's usage rollup once, beside the last segment the push wrote.
// Sent a file at a time, the fleet holds the rows and rollups a one-batch push writes; a damaged
// file in a later batch stops that session there (named, what came before it sent, not sealed).
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openStore, parseKey } from "@lake/layout";
import { readIndex } from "@lake/store";
import { decodeUsageCarryState, encodeUsageCarry, usageCarryRecords, type UsageCarryState } from "@lake/events/usage";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { localRoot, type LocalRoot } from "../src/internal/local-root.js";
import { push } from "../src/internal/push.js";
import { fleetLanded, fleetRecords, runCli, userLine, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

/** A root the sample vendor tree was collected into; its Claude Code sessions' sources (`collect` collects again). */
async function sampleRoot(name: string): Promise<{ dir: string; root: string; sources: string[]; collect: () => Promise<void> }> {
  const dir = tempDir(name);
  const tree = vendorTree(join(dir, "vendor"));
  const root = join(dir, "root");
  const collect = async () => expect((await runCli(["collect", "--root", root, ...tree.flags], { HOME: join(dir, "home") })).code).toBe(0);
  await collect();
  return { dir, root, sources: walk(tree.claude).filter((f) => f.endsWith(".jsonl") && !f.includes("subagents")), collect };
}

/** The session id of a Claude Code transcript (its last line's). */
function sessionOf(source: string): string {
  return (JSON.parse(readFileSync(source, "utf8").trimEnd().split("\n").pop()!) as { sessionId: string }).sessionId;
}

/** A session's usage rollup objects in a fleet, as keys (sorted). */
function rollupKeys(fleet: string, sid: string): string[] {
  return keysOf(fleet).filter((k) => k.includes(`/session=${sid}/`) && parseKey(k)?.kind === "segment-usage").sort();
}

/** The names (past the segment number) of the usage rollup beside a session's newest segment in a fleet. */
function newestRollup(fleet: string, sid: string): string[] {
  const keys = rollupKeys(fleet, sid);
  expect(keys.length, `${fleet}: no usage rollup of ${sid}`).toBeGreaterThan(0);
  const newest = Math.max(...keys.map((k) => Number(/seg-(\d+)\./.exec(k)![1])));
  return keys.filter((k) => k.includes(`seg-${String(newest).padStart(6, "0")}.`)).map((k) => k.slice(k.lastIndexOf(".usage."))).sort();
}

/** The one carry of the root's that counts a session's usage (its file; those in `except` left out), decoded. */
function sessionCarry(root: string, sid: string, except: ReadonlySet<string> = new Set()): { file: string; state: UsageCarryState } {
  const found = walk(join(root, "_export", "usage"))
    .filter((f) => !except.has(f))
    .map((file) => ({ file, state: decodeUsageCarryState(readFileSync(file), file) }))
    .filter((c) => c.state.rollup.sessions.includes(sid));
  expect(found.length, `carries of ${sid}`).toBe(1);
  return found[0]!;
}

/**
 * A root whose Claude Code sessions each landed three files (collected, grown twice); with `reland`,
 * the second file of each also holds a copy of its session's first line (a re-land: a duplicate).
 */
async function grownRoot(name: string, reland = false): Promise<{ dir: string; root: string; sources: string[]; collect: () => Promise<void> }> {
  const { dir, root, sources, collect } = await sampleRoot(name);
  for (const round of [1, 2]) {
    for (const [i, f] of sources.entries()) {
      const sid = sessionOf(f);
      appendFileSync(f, userLine(sid, 1000 * round + i, `grown in round ${round}`));
      if (reland && round === 1) appendFileSync(f, `${readFileSync(f, "utf8").split("\n")[0]!}\n`);
    }
    await collect();
  }
  return { dir, root, sources, collect };
}

/** A Claude Code assistant line of message `msg` (one content block, the message's usage), the `n`th line appended. */
function assistantLine(sid: string, n: number, msg: string, text: string): string {
  return `${JSON.stringify({
    parentUuid: null, isSidechain: false, userType: "external", type: "assistant", sessionId: sid, requestId: `req_${msg}`,
    uuid: `00000000-0000-4000-9000-${n.toString(16).padStart(12, "0")}`, timestamp: new Date(Date.UTC(2026, 1, 12, 12, 0, n)).toISOString(),
    message: { model: "claude-opus-4-6", id: `msg_${msg}`, type: "message", role: "assistant", content: [{ type: "text", text }], usage: { input_tokens: 3, cache_creation_input_tokens: 700, cache_read_input_tokens: 1800, output_tokens: 20 + n } },
  })}\n`;
}

/** The fleet's objects under sessions/, as keys. */
function keysOf(fleet: string): string[] {
  return walk(join(fleet, "sessions")).map((f) => f.slice(fleet.length + 1).split("\\").join("/"));
}

describe("push in batches", () => {
  it("a file at a time: the rows and usage rollups of a one-batch push, one rollup per directory beside its newest segment; each batch read while the one before is written", async () => {
    const { dir, root } = await grownRoot("push-batches");
    const opts = { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1" };
    const a = join(dir, "fleet-a");
    const b = join(dir, "fleet-b");
    const whole = await push(localRoot(root), openStore(pathToFileURL(a).href), opts);
    // Counted from the records it sent, never from the store: nothing is downloaded.
    const downloads: string[] = [];
    // The batches each session's rows were read in, and its segments' uploads, in one log.
    const log: string[] = [];
    const storeB = openStore(pathToFileURL(b).href);
    const watched = new Proxy(storeB, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== "function") return v;
        if (prop === "download") return (...args: unknown[]) => (downloads.push(String(args[0])), (v as (...a: unknown[]) => unknown).apply(target, args));
        if (prop === "upload") return (...args: unknown[]) => (log.push(`upload ${String(args[0])}`), (v as (...a: unknown[]) => unknown).apply(target, args));
        return v;
      },
    });
    const local = localRoot(root);
    const reading: LocalRoot = { ...local, readRows: (id, files, agent, max) => (log.push(`rows ${id}`), local.readRows(id, files, agent, max)) };
    const batched = await push(reading, watched, { ...opts, batchBytes: 1 });
    expect(downloads).toEqual([]);
    // A session's next batch is read while DuckDB writes the segment of the one before it: before that segment's upload.
    let ahead = 0;
    for (const sid of local.sessions()) {
      const reads = log.flatMap((l, i) => (l === `rows ${sid}` ? [i] : []));
      const uploads = log.flatMap((l, i) => (l.startsWith("upload ") && l.includes(`/session=${sid}/`) && parseKey(l.slice(7))?.kind === "segment" ? [i] : []));
      expect(uploads.length, sid).toBe(reads.length);
      for (let k = 1; k < reads.length; k++, ahead++) expect(reads[k], `${sid} batch ${k}`).toBeLessThan(uploads[k - 1]!);
    }
    expect(ahead).toBeGreaterThanOrEqual(4);
    expect(batched.problems).toEqual([]);
    expect(batched.sessions).toBe(whole.sessions);
    expect(batched.rows).toBe(whole.rows);
    // The grown sessions landed 3 files each: 3 segments where the one-batch push wrote 1.
    expect(batched.segments).toBeGreaterThanOrEqual(whole.segments + 2 * 2);

    // Every row once, landed where the one-batch push's was, the same records.
    const landed = await fleetLanded(b);
    expect(new Set(landed).size).toBe(landed.length);
    expect(landed).toEqual(await fleetLanded(a));
    expect(await fleetRecords(b)).toEqual(await fleetRecords(a));

    // Per directory: the rollup beside the newest segment, the same bytes (named by them) as the
    // one-batch push's; no rollup beside an earlier segment.
    const dirs = (keys: string[]) => {
      const out = new Map<string, { segs: number[]; rollups: Map<number, string[]> }>();
      for (const k of keys) {
        const p = parseKey(k);
        if (p?.kind !== "segment" && p?.kind !== "segment-usage") continue;
        const d = k.slice(0, k.lastIndexOf("/"));
        const e = out.get(d) ?? { segs: [] as number[], rollups: new Map<number, string[]>() };
        out.set(d, e);
        const seq = Number(/seg-(\d+)\./.exec(k)![1]);
        if (p.kind === "segment") e.segs.push(seq);
        else e.rollups.set(seq, [...(e.rollups.get(seq) ?? []), k.slice(k.lastIndexOf("/") + 1).replace(/^seg-\d+\./, "")]);
      }
      return out;
    };
    const da = dirs(keysOf(a));
    const db = dirs(keysOf(b));
    expect([...db.keys()].sort()).toEqual([...da.keys()].sort());
    let several = 0;
    for (const [d, e] of db) {
      const newest = Math.max(...e.segs);
      if (e.segs.length > 1) several++;
      expect([...e.rollups.keys()], d).toEqual([newest]);
      const ea = da.get(d)!;
      expect(e.rollups.get(newest)!.sort(), d).toEqual(ea.rollups.get(Math.max(...ea.segs))!.sort());
    }
    expect(several).toBeGreaterThanOrEqual(2);

    // Nothing new: nothing sent again.
    expect(await push(localRoot(root), openStore(pathToFileURL(b).href), { ...opts, batchBytes: 1 })).toMatchObject({ sessions: 0, segments: 0 });
  }, 180_000);

  it("an older push's carry (its records alone) is read: the next push counts from it and downloads nothing; its rollup is the one counting everything gives", async () => {
    const { dir, root, sources, collect } = await grownRoot("push-batches-old-carry");
    const opts = { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1" };
    const fleet = join(dir, "fleet");
    await push(localRoot(root), openStore(pathToFileURL(fleet).href), opts);
    // Every carry as an older push wrote it: the records' document, without the state line.
    const carries = walk(join(root, "_export", "usage"));
    expect(carries.length).toBeGreaterThan(0);
    for (const f of carries) {
      const st = decodeUsageCarryState(readFileSync(f), f);
      writeFileSync(f, encodeUsageCarry(usageCarryRecords(st, f)));
    }
    const sid = sessionOf(sources[0]!);
    appendFileSync(sources[0]!, userLine(sid, 9000, "grown after the upgrade"));
    await collect();
    const downloads: string[] = [];
    const watched = new Proxy(openStore(pathToFileURL(fleet).href), {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== "download" || typeof v !== "function") return v;
        return (...args: unknown[]) => (downloads.push(String(args[0])), (v as (...a: unknown[]) => unknown).apply(target, args));
      },
    });
    expect(await push(localRoot(root), watched, opts)).toMatchObject({ sessions: 1, segments: 1, problems: [] });
    expect(downloads).toEqual([]);
    // The grown directory's carry has a state line again; the others are as they were.
    const states = walk(join(root, "_export", "usage")).filter((f) => readFileSync(f, "utf8").startsWith('{"format":"lake-usage-carry-state"'));
    expect(states.map((f) => decodeUsageCarryState(readFileSync(f), f).rollup.sessions)).toEqual([[sid]]);
    // The grown directory's newest rollup: the bytes a one-push fleet of the same root holds.
    const other = join(dir, "fleet-whole");
    await push(localRoot(root), openStore(pathToFileURL(other).href), opts);
    expect(newestRollup(fleet, sid)).toEqual(newestRollup(other, sid));
  }, 180_000);

  it("the index entries of files push.state lists as sent are not read; asked for one of them, the index is read whole", async () => {
    const { root } = await grownRoot("push-batches-sent", true);
    const plain = localRoot(root);
    const id = plain.sessions().find((s) => walk(join(root, s)).filter((f) => f.endsWith(".sd")).length >= 3)!;
    const files = await plain.landedFiles(id);
    const whole = (await plain.readRows(id, files, "host-a")).lines;
    // The re-landed copy in an earlier file (a duplicate the index marks) is not among them.
    const dups = readIndex(root, id).entries.filter((e) => e.duplicate);
    expect(dups.length).toBeGreaterThan(0);
    expect(dups.every((d) => d.seq < files[files.length - 1]!.seq)).toBe(true);
    expect(whole.some((l) => dups.some((d) => d.seq === l.landed_seq && d.row === l.landed_row))).toBe(false);
    const at = (l: { landed_seq: number; landed_row: number }) => `${l.landed_seq}/${l.landed_row}`;
    // The newest file unsent: its rows, read from an index that decoded its entries alone.
    const sent = (rel: string) => rel !== files[files.length - 1]!.rel;
    const fresh = localRoot(root);
    expect(await fresh.landedFiles(id, sent)).toEqual(files);
    const last = (await fresh.readRows(id, [files[files.length - 1]!], "host-a")).lines;
    expect(last.map(at)).toEqual(whole.filter((l) => l.landed_seq === files[files.length - 1]!.seq).map(at));
    // Every file asked for, though the index was read for the newest: the same rows as a whole read.
    const again = localRoot(root);
    await again.landedFiles(id, sent);
    expect((await again.readRows(id, files, "host-a")).lines.map(at)).toEqual(whole.map(at));
  }, 120_000);

  it("a damaged file in a later batch: the session is named, the files before it sent, the session not sealed; the others are", async () => {
    const { dir, root } = await grownRoot("push-batches-damaged");
    const local = localRoot(root);
    const victim = local.sessions().find((id) => walk(join(root, id)).filter((f) => f.endsWith(".sd")).length >= 3)!;
    expect(victim).toBeDefined();
    const files = await local.landedFiles(victim);
    const last = files[files.length - 1]!;
    const path = join(root, victim, last.rel);
    const buf = readFileSync(path);
    buf[buf.length - 3] = buf[buf.length - 3]! ^ 1;
    writeFileSync(path, buf);

    const fleet = join(dir, "fleet");
    const r = await push(localRoot(root), openStore(pathToFileURL(fleet).href), { agent: "host-a", sealIdleSeconds: 0, fleetId: "f1", batchBytes: 1 });
    expect(r.problems.map((p) => p.session)).toEqual([victim]);
    expect(r.problems[0]!.reason).toContain(path);
    const keys = keysOf(fleet);
    const mine = keys.filter((k) => k.includes(`/session=${victim}/`));
    // Its files before the damaged one went out (a segment each), with the rollup of what was sent.
    expect(mine.filter((k) => parseKey(k)?.kind === "segment").length).toBe(files.length - 1);
    expect(mine.some((k) => parseKey(k)?.kind === "segment-usage")).toBe(true);
    expect(mine.some((k) => parseKey(k)?.kind === "sealed")).toBe(false);
    const sealed = new Set(keys.filter((k) => parseKey(k)?.kind === "sealed").map((k) => /session=([^/]+)\//.exec(k)![1]));
    expect(sealed.size).toBe(r.sealed);
    expect(sealed.has(victim)).toBe(false);
    expect(r.sealed).toBe(local.sessions().length - 1);
    const state = JSON.parse(readFileSync(join(root, "push.state"), "utf8")) as { receivers: Record<string, { sessions: Record<string, { files: Record<string, string>; sealed: boolean }> }> };
    const st = Object.values(state.receivers)[0]!.sessions[victim]!;
    expect(Object.keys(st.files).sort()).toEqual(files.slice(0, -1).map((f) => f.rel).sort());
    expect(st.sealed).toBe(false);
  }, 180_000);
  it("one message's usage copies split across batches: the usage is folded batch by batch, never counted whole, and the rollup is the one-batch push's", async () => {
    const { dir, root, sources, collect } = await sampleRoot("push-batches-split-message");
    const source = sources[0]!;
    const sid = sessionOf(source);
    // Claude Code writes one line per content block of a message, each with the message's usage:
    // three copies of one message land in three files (three batches at batchBytes 1), a fourth
    // file starts with the last copy and goes on with another message.
    const copy = (n: number, msg: string, text: string) => assistantLine(sid, n, msg, text);
    appendFileSync(source, copy(1, "split01", "first block"));
    await collect();
    appendFileSync(source, copy(2, "split01", "second block"));
    await collect();
    appendFileSync(source, copy(3, "split01", "third block") + copy(4, "after01", "the next message"));
    await collect();

    const opts = { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1" };
    const whole = join(dir, "fleet-whole");
    await push(localRoot(root), openStore(pathToFileURL(whole).href), opts);
    const before = new Set(walk(join(root, "_export", "usage")));
    const batched = join(dir, "fleet-batched");
    expect(await push(localRoot(root), openStore(pathToFileURL(batched).href), { ...opts, batchBytes: 1 })).toMatchObject({ problems: [] });

    // The session's directory: its rollup beside its newest segment, the bytes the one-batch push wrote.
    expect(newestRollup(batched, sid)).toEqual(newestRollup(whole, sid));
    expect(newestRollup(batched, sid).length).toBe(2);
    // Its carry grew a batch at a time (a chunk each), the split message held back to the batch
    // after it: counting everything at once would leave one chunk.
    expect(sessionCarry(root, sid, before).state.chunks.length).toBeGreaterThanOrEqual(3);
  }, 180_000);

  it("sessions the push seals, sent a file at a time: usage folded into the rollup alone, the one-batch push's rollups, nothing downloaded; a late copy of a message folded batches before is counted from the store's segments", async () => {
    const { dir, root, sources, collect } = await sampleRoot("push-batches-sealed");
    const source = sources[0]!;
    const sid = sessionOf(source);
    appendFileSync(source, assistantLine(sid, 1, "seal01", "first") + assistantLine(sid, 2, "seal02", "second"));
    await collect();
    appendFileSync(source, assistantLine(sid, 3, "seal02", "second, more") + userLine(sid, 4, "a question"));
    await collect();
    // Every session is due for its seal: its directory's carry is never written, so the push folds
    // its usage into the rollup and the identity hashes alone (no records' document).
    const opts = { agent: "host-a", sealIdleSeconds: 0, fleetId: "f1" };
    const watched = (fleet: string, downloads: string[]) => {
      const store = openStore(pathToFileURL(fleet).href);
      return new Proxy(store, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver) as unknown;
          if (prop === "download" && typeof v === "function") return (...args: unknown[]) => (downloads.push(String(args[0])), (v as (...a: unknown[]) => unknown).apply(target, args));
          return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    };
    const pushBoth = async (name: string) => {
      const whole = join(dir, `${name}-whole`);
      const batched = join(dir, `${name}-batched`);
      const downloads: string[] = [];
      // The reference: one batch, nothing sealed (every directory's carry made and kept).
      const a = await push(localRoot(root), openStore(pathToFileURL(whole).href), { ...opts, sealIdleSeconds: 86_400 });
      const carries = walk(join(root, "_export", "usage"));
      const b = await push(localRoot(root), watched(batched, downloads), { ...opts, batchBytes: 1 });
      // The sealing push wrote no carry (its directories' would only be removed at their seals).
      expect(walk(join(root, "_export", "usage"))).toEqual(carries);
      expect(b.problems).toEqual([]);
      expect([a.sealed, b.sessions, b.rows, b.sealed]).toEqual([0, a.sessions, a.rows, a.sessions]);
      expect(b.segments).toBeGreaterThan(a.segments);
      const rollups = (fleet: string) => keysOf(fleet).filter((k) => parseKey(k)?.kind === "segment-usage").map((k) => `${k.slice(0, k.lastIndexOf("/"))} ${k.slice(k.lastIndexOf(".usage."))}`).sort();
      expect(rollups(batched)).toEqual(rollups(whole));
      expect(rollups(batched).filter((k) => k.includes(`/session=${sid} `)).length).toBe(2);
      return downloads;
    };
    // The copies of seal02 in two files: held back to the batch after, as in any push.
    expect(await pushBoth("fleet-1")).toEqual([]);
    // A late copy of seal01 (folded two batches before, and not in the records' document): the
    // directory is counted from its segments in the store.
    appendFileSync(source, assistantLine(sid, 5, "seal01", "first, again"));
    await collect();
    const downloads = await pushBoth("fleet-2");
    expect(downloads.length).toBeGreaterThan(0);
    for (const k of downloads) expect(k).toContain(`/session=${sid}/`);
  }, 180_000);

  it("push.state lost: the next push finds each segment taken, reads back which landed files and usage it holds, and writes the directory's rollup once, grown a segment at a time; only a directory's first segment is written again", async () => {
    const { dir, root, sources, collect } = await sampleRoot("push-batches-lost-state");
    const source = sources[0]!;
    const sid = sessionOf(source);
    for (const round of [1, 2]) {
      appendFileSync(source, assistantLine(sid, round, `round${round}`, `answer ${round}`));
      await collect();
    }
    const opts = { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1", batchBytes: 1 };
    const fleet = join(dir, "fleet");
    const first = await push(localRoot(root), openStore(pathToFileURL(fleet).href), opts);
    const rollup = newestRollup(fleet, sid);
    const written = rollupKeys(fleet, sid);
    expect(written.length).toBe(2);
    const rows = await fleetLanded(fleet);

    rmSync(join(root, "push.state"));
    rmSync(join(root, "_export", "usage"), { recursive: true });
    // Segment uploads the push tries: one per directory (its first key, found taken on upload);
    // the keys after it are found by a HEAD and read back without being written again.
    const uploads: string[] = [];
    const counting = new Proxy(openStore(pathToFileURL(fleet).href), {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== "upload" || typeof v !== "function") return v;
        return (...args: unknown[]) => {
          if (parseKey(String(args[0]))?.kind === "segment") uploads.push(String(args[0]));
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const again = await push(localRoot(root), counting, opts);
    expect(again).toMatchObject({ segments: 0, rows: 0, problems: [] });
    expect(again.recovered).toBe(first.segments);
    const directories = new Set(keysOf(fleet).filter((k) => parseKey(k)?.kind === "segment").map((k) => k.slice(0, k.lastIndexOf("/"))));
    expect(first.segments).toBeGreaterThan(directories.size);
    expect(uploads.length).toBe(directories.size);
    expect(new Set(uploads.map((k) => k.slice(0, k.lastIndexOf("/"))))).toEqual(new Set([...directories].map((d) => `${d}`)));
    expect(await fleetLanded(fleet)).toEqual(rows);
    expect(newestRollup(fleet, sid)).toEqual(rollup);
    // One rollup, beside the newest segment (none beside the segments before it), as the first push wrote.
    expect(rollupKeys(fleet, sid)).toEqual(written);
    // The session's carry grew by each segment read back (a chunk each): three of its segments hold usage.
    expect(sessionCarry(root, sid).state.chunks.length).toBeGreaterThanOrEqual(3);
  }, 180_000);

  it("a carry whose records no longer check, needed because new usage meets the old: the rollup is counted from the store's segments, the push goes on", async () => {
    const { dir, root, sources, collect } = await sampleRoot("push-batches-damaged-carry");
    const source = sources[0]!;
    const sid = sessionOf(source);
    appendFileSync(source, assistantLine(sid, 1, "again01", "first answer"));
    await collect();
    const opts = { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1" };
    const fleet = join(dir, "fleet");
    await push(localRoot(root), openStore(pathToFileURL(fleet).href), opts);
    // A byte of the session's carry's records flipped: its state line still reads, its records do not check.
    const carry = sessionCarry(root, sid).file;
    const bytes = readFileSync(carry);
    const at = bytes.indexOf(10) + 1 + Math.floor((bytes.length - bytes.indexOf(10) - 4) / 2);
    bytes[at] = bytes[at] === 0x30 ? 0x31 : 0x30;
    writeFileSync(carry, bytes);
    expect(() => usageCarryRecords(decodeUsageCarryState(readFileSync(carry), carry), carry)).toThrow();
    // Another copy of the same message: its usage key is the carry's, so the carry's records are needed.
    appendFileSync(source, assistantLine(sid, 2, "again01", "second block"));
    await collect();
    expect(await push(localRoot(root), openStore(pathToFileURL(fleet).href), opts)).toMatchObject({ sessions: 1, segments: 1, problems: [] });
    const other = join(dir, "fleet-whole");
    await push(localRoot(root), openStore(pathToFileURL(other).href), opts);
    expect(newestRollup(fleet, sid)).toEqual(newestRollup(other, sid));
  }, 180_000);

  it("a push stopped between one runtime's segment and the next one's: the next push reads the uploaded segment back, no row is sent twice", async () => {
    const { dir, root, sources, collect } = await grownRoot("push-batches-mid");
    // One session grows in two runtimes at once: its transcript and its hook events.
    const sid = sessionOf(sources[0]!);
    for (let n = 0; n < 3; n++) {
      const event = { session_id: sid, transcript_path: sources[0], cwd: "/home/dev/p", hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: { command: `echo ${n}` } };
      expect((await runCli(["hook", "--root", root], {}, JSON.stringify(event))).code).toBe(0);
    }
    appendFileSync(sources[0]!, userLine(sid, 5000, "grown beside its hooks"));
    await collect();
    const opts = { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1" };
    const fleet = join(dir, "fleet");
    // The session's second segment upload of the push fails (the first runtime's went out).
    let uploads = 0;
    const failing = new Proxy(openStore(pathToFileURL(fleet).href), {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== "upload" || typeof v !== "function") return v;
        return (...args: unknown[]) => {
          const key = String(args[0]);
          if (key.includes(`/session=${sid}/`) && parseKey(key)?.kind === "segment" && ++uploads === 2) return Promise.reject(new Error("connection reset"));
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    await expect(push(localRoot(root), failing, opts)).rejects.toThrow(/connection reset/);
    const runtimes = new Set(keysOf(fleet).filter((k) => k.includes(`/session=${sid}/`)).map((k) => /runtime=([^/]+)\//.exec(k)![1]));
    expect(runtimes.size).toBe(1);
    const again = await push(localRoot(root), openStore(pathToFileURL(fleet).href), opts);
    expect(again.problems).toEqual([]);
    expect(again.recovered).toBe(1);
    // Every row once, the rows a push that never stopped sends.
    const whole = join(dir, "fleet-whole");
    await push(localRoot(root), openStore(pathToFileURL(whole).href), opts);
    const keys = await fleetLanded(fleet);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(await fleetLanded(whole));
    expect(keys.filter((k) => k.startsWith(`${sid} `)).length).toBeGreaterThan(3);
  }, 180_000);
});
