// forget, clean and recover on real roots: the bundled samples collected and pushed by the built
// collector, then forget --apply SIGKILLed at every step it reaches (LAKE_TEST_KILL_AT,
// src/internal/crash.ts) and the whole pipeline run again after each stop.
import { createHash } from "node:crypto";
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRecord, usageBySession } from "@lake/events";
import { listSessions, readIndex, readLanded } from "@lake/store";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { fleetRecords, runCli, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

const TARGET = "258c7280-ae70-4798-800f-63464d01a85d";
const AGENT = ["--agent", "host-f", "--seal-idle", "0", "--fleet-id", "ff"];

/** SHA-256 over every file under `dir` (path and bytes; a lock file left out), or "" when absent. */
function treeHash(dir: string, skip: (rel: string) => boolean = () => false): string {
  if (!existsSync(dir)) return "";
  const h = createHash("sha256");
  for (const f of walk(dir).sort()) {
    const rel = relative(dir, f);
    if (rel.endsWith(".lock") || skip(rel)) continue;
    // A cursor's dev, ino and updated_at follow the file system, not the data (a restored copy has new inodes).
    const bytes = rel.endsWith(".cursor") ? readFileSync(f, "utf8").split("\n").filter((l) => !/^(dev|ino|updated_at) /.test(l)).join("\n") : readFileSync(f);
    h.update(rel).update("\0").update(bytes).update("\0");
  }
  return h.digest("hex");
}

/** Per-session usage of a root, from its landed records (re-landed duplicates left out). */
function rootUsage(root: string): Record<string, unknown> {
  const records: ReturnType<typeof parseRecord>[] = [];
  for (const id of listSessions(root)) {
    const idx = readIndex(root, id);
    const dup = new Set(idx.entries.filter((e) => e.duplicate).map((e) => `${e.seq}/${e.row}`));
    for (const f of idx.files) {
      readLanded(root, id, f.rel).rows.forEach((text, row) => {
        if (!dup.has(`${f.seq}/${row}`)) records.push(parseRecord(JSON.parse(text)));
      });
    }
  }
  return Object.fromEntries([...usageBySession(records)].sort(([a], [b]) => (a < b ? -1 : 1)));
}

interface Setup {
  dir: string;
  tree: ReturnType<typeof vendorTree>;
  root: string;
  fleet: string;
  env: NodeJS.ProcessEnv;
}

function setup(name: string): Setup {
  const dir = tempDir(name);
  return { dir, tree: vendorTree(join(dir, "vendor")), root: join(dir, "root"), fleet: join(dir, "fleet"), env: { HOME: join(dir, "home"), LAKE_READER_CACHE: join(dir, "cache"), LAKE_COMPILE_CACHE: tempDir(`${name}-compile-cache`) } };
}

async function ok(s: Setup, args: string[]): Promise<string> {
  const r = await runCli([...args], s.env);
  expect(r.code, `${args.join(" ")}\n${r.stdout}${r.stderr}`).toBe(0);
  return r.stdout;
}

async function hook(s: Setup, session: string, event: string): Promise<void> {
  const r = await runCli(["hook", "--root", s.root], s.env, JSON.stringify({ session_id: session, hook_event_name: event }));
  expect(r.code, r.stderr).toBe(0);
}

/** collect, parse, push and verify, as after a restart; returns what each pass did. */
async function pipeline(s: Setup): Promise<{ landed: number; rounds: number; published: number; segments: number }> {
  const c = JSON.parse(await ok(s, ["collect", "--root", s.root, ...s.tree.flags, "--json"])) as { landed_files: number; rounds: number };
  const p = JSON.parse(await ok(s, ["parse", "--root", s.root, "--json"])) as { published: number };
  const u = JSON.parse(await ok(s, ["push", "--root", s.root, "--store", `file://${s.fleet}`, ...AGENT, "--json"])) as { segments: number };
  await ok(s, ["verify", "--root", s.root]);
  return { landed: c.landed_files, rounds: c.rounds, published: p.published, segments: u.segments };
}

let base: Setup;
let targetSources: string[];

beforeAll(async () => {
  base = setup("forget-base");
  await hook(base, TARGET, "SessionStart");
  await hook(base, "other-hook-session", "Stop");
  await ok(base, ["collect", "--root", base.root, ...base.tree.flags]);
  await ok(base, ["push", "--root", base.root, "--store", `file://${base.fleet}`, ...AGENT]);
  targetSources = walk(base.tree.claude).filter((f) => f.includes(TARGET)).sort();
  expect(targetSources.length).toBe(3);
  expect(listSessions(base.root)).toContain(TARGET);
  expect(existsSync(join(base.root, "_hooks", "spool", `${TARGET}.wal.tail`))).toBe(true);
}, 120_000);

describe("forget", () => {
  it("SIGKILL at every step of forget --apply --source-too: the pipeline rerun lands, parses and sends nothing, the session ends fully removed, _removed/ empty, the rest untouched", { timeout: 20 * 60_000 }, async () => {
    // One working copy at fixed paths (push.state is keyed by the store's URL), restored from a
    // snapshot before each run; the other sessions' source files are never copied (their cursors
    // keep their inodes).
    const snap = tempDir("forget-snap");
    cpSync(base.root, join(snap, "root"), { recursive: true });
    cpSync(base.fleet, join(snap, "fleet"), { recursive: true });
    for (const f of targetSources) cpSync(f, join(snap, "src", relative(base.tree.claude, f)));
    const restore = () => {
      rmSync(base.root, { recursive: true, force: true });
      rmSync(base.fleet, { recursive: true, force: true });
      cpSync(join(snap, "root"), base.root, { recursive: true });
      cpSync(join(snap, "fleet"), base.fleet, { recursive: true });
      for (const f of targetSources) cpSync(join(snap, "src", relative(base.tree.claude, f)), f);
    };
    const others = listSessions(base.root).filter((id) => id !== TARGET);
    const otherHash = () => Object.fromEntries(others.map((id) => [id, treeHash(join(base.root, id), (rel) => rel === "session.state") + treeHash(join(base.root, "_conversations", id))]));
    const before = otherHash();
    const usageBefore = rootUsage(base.root);
    expect(usageBefore[TARGET]).toBeDefined();
    const { [TARGET]: _gone, ...usageRest } = usageBefore;
    const fleetBefore = treeHash(base.fleet);
    const fleetRowsRest = (await fleetRecords(base.fleet)).filter((r) => r.session_id !== TARGET).length;

    const forget = ["forget", TARGET, "--root", base.root, "--source-too", ...base.tree.flags, "--apply"];
    const stepsFile = join(snap, "steps");
    const first = await runCli(forget, { ...base.env, LAKE_TEST_STEPS: stepsFile });
    expect(first.code, first.stderr).toBe(0);
    const steps = readFileSync(stepsFile, "utf8").trim().split("\n");
    const names = new Set(steps.map((l) => l.slice(l.indexOf(" ") + 1)));
    for (const n of ["store:forget:record:rename", "store:forget:source-deleted", "store:forget:session-renamed", "store:forget:removed-entry", "store:forget:chain-renamed", "store:forget:spool-deleted", "store:forget:state-dropped"]) expect(names).toContain(n);

    const check = async (k: number) => {
      const where = `killed at step ${k} (${steps[k - 1] ?? "none"})`;
      expect(existsSync(join(base.root, TARGET)), where).toBe(false);
      expect(existsSync(join(base.root, "_conversations", TARGET)), where).toBe(false);
      expect(readdirSync(join(base.root, "_removed")), where).toEqual([]);
      expect(existsSync(join(base.root, "_hooks", "spool", `${TARGET}.wal`)), where).toBe(false);
      expect(existsSync(join(base.root, "_hooks", "spool", `${TARGET}.wal.tail`)), where).toBe(false);
      for (const f of targetSources) expect(existsSync(f), `${where}: ${f}`).toBe(false);
      expect(existsSync(join(base.tree.claude, "-home-marco-projects-spotter", TARGET)), where).toBe(false);
      expect(existsSync(join(base.tree.claude, "-home-marco-projects-spotter")), where).toBe(true);
      expect(readFileSync(join(base.root, "push.state"), "utf8"), where).not.toContain(TARGET);
      expect(JSON.parse(readFileSync(join(base.root, "_forget", `${TARGET}.json`), "utf8")), where).toMatchObject({ state: "removed" });
      expect(otherHash(), where).toEqual(before);
      expect(rootUsage(base.root), where).toEqual(usageRest);
      // Nothing was sent again: the fleet is byte for byte what it was.
      expect(treeHash(base.fleet), where).toBe(fleetBefore);
    };
    await check(0);

    let resumedByPipeline = 0;
    for (let k = 1; k <= steps.length; k++) {
      restore();
      const r = await runCli(forget, { ...base.env, LAKE_TEST_KILL_AT: String(k) });
      expect(r.signal, `step ${k}: ${r.stderr}`).toBe("SIGKILL");
      const recorded = existsSync(join(base.root, "_forget", `${TARGET}.json`));
      const p = await pipeline(base);
      expect(p, `rerun after a kill at step ${k} (${steps[k - 1]})`).toEqual({ landed: 0, rounds: 0, published: 0, segments: 0 });
      if (recorded) {
        resumedByPipeline++;
      } else {
        // Stopped before the record was in place: nothing was removed; the person runs forget again.
        expect(existsSync(join(base.root, TARGET))).toBe(true);
        await ok(base, forget);
        expect(await pipeline(base)).toEqual({ landed: 0, rounds: 0, published: 0, segments: 0 });
      }
      await check(k);
    }
    expect(resumedByPipeline).toBeGreaterThanOrEqual(steps.length - 3);
    expect((await fleetRecords(base.fleet)).filter((r) => r.session_id !== TARGET).length).toBe(fleetRowsRest);
    console.log(`forget: killed at each of ${steps.length} steps; ${resumedByPipeline} removals finished by the pipeline alone`);
    restore();
  });

  it("previews without --apply, keeps the source without --source-too, and --undo lets collect land the session again", { timeout: 120_000 }, async () => {
    const s = setup("forget-undo");
    await ok(s, ["collect", "--root", s.root, ...s.tree.flags]);
    const h0 = treeHash(s.dir);
    const preview = await ok(s, ["forget", TARGET, "--root", s.root, "--json"]);
    expect(JSON.parse(preview)).toMatchObject({ apply: false, session: TARGET });
    expect(treeHash(s.dir)).toBe(h0);
    await ok(s, ["forget", TARGET, "--root", s.root, "--apply"]);
    expect(existsSync(join(s.root, TARGET))).toBe(false);
    expect(walk(s.tree.claude).filter((f) => f.includes(TARGET)).length).toBe(3);
    expect((await pipeline(s)).landed).toBe(0);
    expect(existsSync(join(s.root, TARGET))).toBe(false);
    await ok(s, ["forget", TARGET, "--root", s.root, "--undo"]);
    expect((await pipeline(s)).landed).toBeGreaterThan(0);
    expect(listSessions(s.root)).toContain(TARGET);
  });

  it("a _removed that is a symbolic link or a file stops the removal with a message; nothing is removed", { timeout: 120_000 }, async () => {
    const s = setup("forget-symlink");
    await ok(s, ["collect", "--root", s.root, ...s.tree.flags]);
    const elsewhere = join(s.dir, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "keep"), "x");
    symlinkSync(elsewhere, join(s.root, "_removed"));
    const h = treeHash(join(s.root, TARGET));
    const r = await runCli(["forget", TARGET, "--root", s.root, "--apply"], s.env);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/_removed: is a symbolic link; no session is removed/);
    expect(treeHash(join(s.root, TARGET))).toBe(h);
    expect(readdirSync(elsewhere)).toEqual(["keep"]);
    rmSync(join(s.root, "_removed"));
    writeFileSync(join(s.root, "_removed"), "");
    const r2 = await runCli(["forget", TARGET, "--root", s.root, "--apply"], s.env);
    expect(r2.code).toBe(6);
    expect(r2.stderr).toMatch(/_removed: is not a directory/);
    expect(lstatSync(join(s.root, TARGET)).isDirectory()).toBe(true);
  });
});

describe("clean and recover", () => {
  it("clean without --apply changes nothing; with --apply only derived state goes and collect rebuilds the same rounds", { timeout: 120_000 }, async () => {
    const s = setup("clean");
    await ok(s, ["collect", "--root", s.root, ...s.tree.flags]);
    mkdirSync(join(s.dir, "cache", "mirror", "abcd"), { recursive: true });
    writeFileSync(join(s.dir, "cache", "mirror", "abcd", "x.parquet"), "p");
    const h0 = treeHash(s.dir);
    const preview = JSON.parse(await ok(s, ["clean", "--root", s.root, "--json"])) as { apply: boolean; items: { what: string }[] };
    expect(preview.apply).toBe(false);
    expect(new Set(preview.items.map((i) => i.what))).toEqual(new Set(["index", "chain", "reader-cache"]));
    expect(preview.items.some((i) => i.what === "reader-cache")).toBe(true);
    expect(treeHash(s.dir)).toBe(h0);
    const landedBefore = treeHash(s.root, (rel) => !rel.endsWith(".sd") && !rel.endsWith(".cursor"));
    const roundsBefore = treeHash(join(s.root, "_conversations"), (rel) => !rel.endsWith(".sf"));
    await ok(s, ["clean", "--root", s.root, "--apply"]);
    expect(existsSync(join(s.root, "_conversations", TARGET))).toBe(false);
    expect(existsSync(join(s.root, TARGET, "index"))).toBe(false);
    expect(existsSync(join(s.dir, "cache", "mirror"))).toBe(false);
    expect(treeHash(s.root, (rel) => !rel.endsWith(".sd") && !rel.endsWith(".cursor"))).toBe(landedBefore);
    const p = await pipeline(s);
    expect(p.landed).toBe(0);
    expect(treeHash(join(s.root, "_conversations"), (rel) => !rel.endsWith(".sf"))).toBe(roundsBefore);
  });

  it("recover refuses a non-empty target; into an empty one it gives a root whose usage equals the original's", { timeout: 180_000 }, async () => {
    const s = setup("recover");
    await hook(s, TARGET, "Stop");
    await ok(s, ["collect", "--root", s.root, ...s.tree.flags]);
    await ok(s, ["push", "--root", s.root, "--store", `file://${s.fleet}`, ...AGENT]);
    const busy = join(s.dir, "busy");
    mkdirSync(busy);
    writeFileSync(join(busy, "something"), "x");
    const refused = await runCli(["recover", "--into", busy, "--store", `file://${s.fleet}`, "--agent", "host-f"], s.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/busy: recovery target is not empty/);
    expect(readdirSync(busy)).toEqual(["something"]);
    const into = join(s.dir, "recovered");
    const out = JSON.parse(await ok(s, ["recover", "--into", into, "--store", `file://${s.fleet}`, "--agent", "host-f", "--json"])) as { sessions: number; rounds: number };
    expect(out.sessions).toBe(listSessions(s.root).length);
    expect(out.rounds).toBe(out.sessions);
    expect(rootUsage(into)).toEqual(rootUsage(s.root));
    await ok(s, ["verify", "--root", into]);
    // The recovered root knows what the store holds: a push from it sends nothing.
    const again = JSON.parse(await ok(s, ["push", "--root", into, "--store", `file://${s.fleet}`, ...AGENT, "--json"])) as { segments: number };
    expect(again.segments).toBe(0);
  });
});
