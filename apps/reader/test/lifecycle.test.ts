// A session that grows after its seal — made by `lake-maint seal` or by `lake-collector push
// --seal-idle` — twice in a row, and a seal racing a push: the real lake-collector, lake-maint and
// lake-reader over one local directory store, from the bundled Claude Code transcripts.
import { spawn } from "node:child_process";
import { appendFileSync, cpSync, existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { decodeLease, decodeSealed, openStore, parseKey } from "@lake/layout";
import { createTestBucket, s3Env } from "@lake/tooling/s3";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { MAINT_BIN } from "./support/fleet.js";
import { runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

const COLLECTOR = fileURLToPath(new URL("../../collector/bin/lake-collector.js", import.meta.url));
const SAMPLES = fileURLToPath(new URL("../../../samples/claude/projects", import.meta.url));
const SID = "258c7280-ae70-4798-800f-63464d01a85d";
const TRANSCRIPT = join("-home-marco-projects-spotter", `${SID}.jsonl`);

interface Exit {
  code: number | null;
  out: string;
  err: string;
}

/** Run a built bin as its own process. */
function proc(bin: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    p.on("error", reject);
    p.on("close", (code) => resolve({ code, out, err }));
  });
}

async function ok(bin: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await proc(bin, args, env);
  expect(r.code, `${bin.split("/").pop()} ${args.join(" ")}: ${r.err}`).toBe(0);
  return r.out;
}

/**
 * One host: a copy of the transcripts, its local root, and the store it pushes to (a local directory,
 * or a bucket of the test radosgw with `s3`).
 */
function host(dir: string, s3?: string) {
  const projects = join(dir, "claude", "projects");
  cpSync(SAMPLES, projects, { recursive: true });
  const root = join(dir, "root");
  const store = s3 ?? pathToFileURL(join(dir, "fleet")).href;
  const env = { HOME: join(dir, "home"), ...(s3 !== undefined ? s3Env() : {}) };
  return {
    projects,
    store,
    collect: () => ok(COLLECTOR, ["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`], env),
    pushArgs: (sealIdle: number) => ["push", "--root", root, "--store", store, "--agent", "host-a", "--fleet-id", "f1", "--seal-idle", String(sealIdle), "--json"],
    push: async (sealIdle: number) => JSON.parse(await ok(COLLECTOR, ["push", "--root", root, "--store", store, "--agent", "host-a", "--fleet-id", "f1", "--seal-idle", String(sealIdle), "--json"], env)) as Record<string, number>,
    env,
    maint: (...args: string[]) => ok(MAINT_BIN, [...args, "--store", store], env),
  };
}

/** Append one user line and one assistant line (with usage) to the sample session, as Claude Code writes them. */
function grow(projects: string, n: number, marker: string): void {
  const file = join(projects, TRANSCRIPT);
  const lines = readFileSync(file, "utf8").trimEnd().split("\n");
  const last = JSON.parse(lines.filter((l) => l.includes('"type":"assistant"')).pop()!) as Record<string, unknown> & { message: Record<string, unknown> };
  const ts = `2026-02-11T23:${String(10 + n).padStart(2, "0")}:00.000Z`;
  const user = { parentUuid: null, isSidechain: false, userType: "external", cwd: last.cwd, sessionId: SID, version: last.version, type: "user", uuid: `00000000-0000-4000-8000-${String(2 * n).padStart(12, "0")}`, timestamp: ts, message: { role: "user", content: `${marker} question ${n}` } };
  const reply = {
    ...last,
    parentUuid: user.uuid,
    uuid: `00000000-0000-4000-8000-${String(2 * n + 1).padStart(12, "0")}`,
    timestamp: ts.replace(":00.000Z", ":05.000Z"),
    requestId: `req_grown_${n}`,
    message: { ...last.message, id: `msg_grown_${n}`, content: [{ type: "text", text: `${marker} answer ${n}` }], usage: { input_tokens: 10 + n, cache_creation_input_tokens: 0, cache_read_input_tokens: 1000 * n, output_tokens: 100 + n } },
  };
  appendFileSync(file, JSON.stringify(user) + "\n" + JSON.stringify(reply) + "\n");
}

type Row = Record<string, unknown>;

/** What the reader answers over a store: event count, usage totals, and where `marker` shows up. */
async function answers(store: string, marker: string, cache: string) {
  const env = { LAKE_READER_CACHE: cache };
  const args = ["--json", "--store", store];
  const events = (await runJson<Row[]>(["sql", "SELECT count(*)::INTEGER AS n FROM events", ...args], env))[0]!.n;
  const usage = (await runJson<{ totals: Row }>(["usage", "daily", ...args], env)).totals;
  const sql = (await runJson<Row[]>(["sql", `SELECT text FROM events WHERE text LIKE '%${marker}%' ORDER BY ts, text`, ...args], env)).map((r) => r.text);
  const search = (await runJson<{ events: Row[] }>(["search", marker, "--limit", "100", ...args], env)).events.length;
  const show = JSON.stringify(await runJson(["show", SID, "--from", "events", ...args], env)).split(marker).length - 1;
  return { events, usage, sql, search, show };
}

/** The appended texts after `n` rounds, in the order they were written. */
const appended = (marker: string, n: number) => Array.from({ length: n }, (_, i) => [`${marker} question ${i + 1}`, `${marker} answer ${i + 1}`]).flat();

/** Every sealed session directory of the store: its segment numbers and its _SEALED count. */
async function sealedDirs(url: string): Promise<{ dir: string; segs: number[]; sealed: number }[]> {
  const store = openStore(url);
  const dirs = new Map<string, { segs: number[]; sealed?: number }>();
  try {
    for await (const o of store.listAll("sessions/")) {
      const k = parseKey(o.key);
      if (k?.kind !== "segment" && k?.kind !== "sealed") continue;
      const dir = o.key.slice(0, o.key.lastIndexOf("/"));
      const d = dirs.get(dir) ?? { segs: [] };
      dirs.set(dir, d);
      if (k.kind === "segment") d.segs.push(k.seq);
      else d.sealed = decodeSealed(o.key, (await store.get(o.key))!.body).segments;
    }
  } finally {
    store.close();
  }
  return [...dirs].filter(([, d]) => d.sealed !== undefined).map(([dir, d]) => ({ dir, segs: d.segs.sort((a, b) => a - b), sealed: d.sealed! }));
}

/** A fresh fleet from the same (grown) transcripts: one collect, one push that seals, one compact. */
async function fresh(dir: string, projects: string): Promise<string> {
  const h = host(dir);
  cpSync(projects, h.projects, { recursive: true, force: true });
  await h.collect();
  await h.push(0);
  await h.maint("compact");
  return h.store;
}

describe("a session that grows after its seal continues in session=<id>.N and is read whole", () => {
  for (const [sealer, backend] of [["lake-maint seal", "local"], ["push --seal-idle 0", "local"], ["lake-maint seal", "s3"]] as const) {
    it(`sealed by ${sealer}, grown twice: every record visible, totals equal a fresh fleet, compact and verify exit 0 (${backend})`, async () => {
      const dir = tempDir("lifecycle");
      const h = host(join(dir, "a"), backend === "s3" ? (await createTestBucket("lifecycle")).url : undefined);
      const byMaint = sealer === "lake-maint seal";
      // push seals by itself only when asked to (--seal-idle 0); otherwise lake-maint seal does.
      const pushAndSeal = async () => {
        const s = await h.push(byMaint ? 86_400 : 0);
        if (byMaint) expect((await h.maint("seal", "--idle", "0")).split("\n").filter((l) => l.startsWith("sealed "))).not.toHaveLength(0);
        return s;
      };
      await h.collect();
      await pushAndSeal();
      await h.maint("compact");
      for (const round of [1, 2]) {
        grow(h.projects, round, "grown-after-seal");
        await h.collect();
        const pushed = await pushAndSeal();
        // The seal was learned from the store (lake-maint's) or from push.state (its own).
        expect(pushed.learned).toBe(byMaint ? 1 : 0);
        expect(pushed.sessions).toBe(1);
        await h.maint("compact");
        expect(await h.maint("verify")).toMatch(/^ok: /);
        const got = await answers(h.store, "grown-after-seal", join(dir, `cache-${round}`));
        expect(got.sql).toEqual(appended("grown-after-seal", round));
        expect(got.search).toBe(2 * round);
        expect(got.show).toBe(2 * round);
      }
      // Growth went to session=<id>.2 and .3; no sealed directory holds a segment past its _SEALED.
      const sealed = (await sealedDirs(h.store)).filter((d) => d.dir.includes(`session=${SID}`));
      expect(sealed.map((d) => d.dir.replace(/.*session=/, "")).sort()).toEqual([SID, `${SID}.2`, `${SID}.3`]);
      for (const d of sealed) expect(d.segs, d.dir).toEqual(Array.from({ length: d.sealed }, (_, i) => i));
      const want = await answers(await fresh(join(dir, "fresh"), h.projects), "grown-after-seal", join(dir, "cache-fresh"));
      expect(await answers(h.store, "grown-after-seal", join(dir, "cache-last"))).toEqual(want);
    }, 300_000);
  }

  it("lake-maint seal racing a push (two processes at once, three times): nothing lost, compact and verify exit 0, equal to a fresh fleet", async () => {
    const dir = tempDir("lifecycle-race");
    const h = host(join(dir, "a"));
    await h.collect();
    await h.push(86_400);
    for (let i = 1; i <= 3; i++) {
      grow(h.projects, i, "raced");
      await h.collect();
      let p: Exit;
      let s: Exit;
      if (i === 1) {
        // The push lands between the seal's listing and its _SEALED: the seal holds its lease (it has
        // listed the session's one segment) and waits before writing; the push, seeing no _SEALED
        // yet, adds seg-000001 to the same directory. That segment is late, and must not be lost.
        const sealing = proc(MAINT_BIN, ["seal", "--idle", "0", "--store", h.store], { ...h.env, LAKE_MAINT_TEST_HOOK: "seal:before-write=sleep:6000" });
        await until(() => leaseHeld(fileURLToPath(h.store)));
        p = await proc(COLLECTOR, h.pushArgs(86_400), h.env);
        s = await sealing;
      } else {
        [p, s] = await Promise.all([proc(COLLECTOR, h.pushArgs(86_400), h.env), proc(MAINT_BIN, ["seal", "--idle", "0", "--store", h.store], h.env)]);
      }
      expect(p.code, p.err).toBe(0);
      expect(s.code, s.err).toBe(0);
      const compact = await h.maint("compact");
      const verify = await h.maint("verify");
      expect(verify).toMatch(/^ok: /);
      if (i === 1) {
        expect(compact).toMatch(new RegExp(`^late sessions/.*/session=${SID}/seg-000001\\.parquet: `, "m"));
        expect(verify).toContain("(1 late, past their _SEALED)");
      }
      const got = await answers(h.store, "raced", join(dir, `cache-${i}`));
      expect(got.sql).toEqual(appended("raced", i));
    }
    await h.maint("seal", "--idle", "0");
    await h.maint("compact");
    expect(await h.maint("verify")).toMatch(/^ok: /);
    const want = await answers(await fresh(join(dir, "fresh"), h.projects), "raced", join(dir, "cache-fresh"));
    const got = await answers(h.store, "raced", join(dir, "cache"));
    expect(got).toEqual(want);
    expect(got.sql).toEqual(appended("raced", 3));
  }, 300_000);
});

/** Whether a lease of the store is held now. */
function leaseHeld(fleet: string): boolean {
  const d = join(fleet, "live", "leases");
  if (!existsSync(d)) return false;
  return readdirSync(d).some((f) => {
    try {
      return decodeLease(`live/leases/${f}`, readFileSync(join(d, f))).status === "held";
    } catch {
      return false; // a lease being replaced
    }
  });
}

async function until(cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}
