// push reads the next session while DuckDB writes the current one's segment: what it reads ahead is
// acted on in session order, a damaged session among them is named and skipped, and the files are
// those a push without reading ahead writes (the same segment bytes for every session).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openStore, type ObjectStore } from "@lake/layout";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { localRoot, type LocalRoot } from "../src/internal/local-root.js";
import { push } from "../src/internal/push.js";
import { claudeSessions, runCli, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

/** `local`, with every read it is asked for logged in order (session and what). */
function logged(local: LocalRoot, log: string[]): LocalRoot {
  return {
    ...local,
    landedFiles: (id) => (log.push(`files ${id}`), local.landedFiles(id)),
    readRows: (id, files, agent) => (log.push(`rows ${id}`), local.readRows(id, files, agent)),
  };
}

/** `store`, with each upload logged (its key) in the same log. */
function loggedStore(store: ObjectStore, log: string[]): ObjectStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== "upload" || typeof v !== "function") return v;
      return (...args: unknown[]) => (log.push(`upload ${String(args[0])}`), (v as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

describe("push reads ahead", () => {
  it("a damaged session between others is named in order and skipped; the others' segments are the bytes a session-by-session push writes", async () => {
    const dir = tempDir("push-ahead");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    expect((await runCli(["collect", "--root", root, ...tree.flags], { HOME: join(dir, "home") })).code).toBe(0);
    const sessions = localRoot(root).sessions();
    expect(sessions.length).toBeGreaterThanOrEqual(4);
    // Damage one landed file of the second session (a byte of its body: its SHA-256 no longer matches).
    const victim = sessions[1]!;
    const landed = walk(join(root, victim)).filter((f) => f.endsWith(".sd"))[0]!;
    const buf = readFileSync(landed);
    buf[buf.length - 3] = buf[buf.length - 3]! ^ 1;
    writeFileSync(landed, buf);

    const opts = { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1" };
    const log: string[] = [];
    const a = await push(logged(localRoot(root), log), loggedStore(openStore(pathToFileURL(join(dir, "fleet-a")).href), log), opts);
    expect(a.problems.map((p) => p.session)).toEqual([victim]);
    expect(a.problems[0]!.reason).toContain(landed);
    expect(a.sessions).toBe(sessions.length - 1);
    // Every session was read once, in order; the second while the first one's segment was written
    // (before its upload).
    expect(log.filter((l) => l.startsWith("files "))).toEqual(sessions.map((s) => `files ${s}`));
    const firstUpload = log.findIndex((l) => l.startsWith("upload ") && l.includes(`/session=${sessions[0]}/seg-`));
    expect(firstUpload).toBeGreaterThan(0);
    expect(log.indexOf(`files ${sessions[1]}`)).toBeLessThan(firstUpload);

    // The same root pushed one session at a time (each push looks at one session only: nothing to read ahead).
    const b = openStore(pathToFileURL(join(dir, "fleet-b")).href);
    const one = (id: string): LocalRoot => ({ ...localRoot(root), sessions: () => [id] });
    for (const id of sessions) await push(one(id), b, opts);
    const segs = (fleet: string) => walk(join(dir, fleet)).filter((f) => f.endsWith(".parquet")).map((f) => [f.slice(join(dir, fleet).length), readFileSync(f).toString("base64")] as const).sort();
    expect(segs("fleet-a").length).toBe(sessions.length - 1);
    expect(segs("fleet-a")).toEqual(segs("fleet-b"));
  });

  it("sends a few sessions at once: uploads overlap, and push.state saved meanwhile never counts a segment the store does not have", async () => {
    const dir = tempDir("push-ahead");
    // More sessions than are sent at once, so some start after a save.
    const { projects } = claudeSessions(join(dir, "vendor"), 9, 3);
    const root = join(dir, "root");
    expect((await runCli(["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`], { HOME: join(dir, "home") })).code).toBe(0);
    const sessions = localRoot(root).sessions();
    expect(sessions.length).toBe(9);
    const fleet = join(dir, "fleet");
    const store = openStore(pathToFileURL(fleet).href);
    // Every upload is slow (the push takes seconds, so push.state is saved while sessions are in
    // flight); at each, what push.state on disk says was sent is checked against the store.
    let inFlight = 0;
    let most = 0;
    let checked = 0;
    const statePath = join(root, "push.state");
    const check = () => {
      if (!existsSync(statePath)) return;
      const state = JSON.parse(readFileSync(statePath, "utf8")) as { receivers: Record<string, { sessions: Record<string, { segments: Record<string, number> }> }> };
      const segs = walk(fleet).filter((f) => f.endsWith(".parquet"));
      for (const [id, ss] of Object.entries(state.receivers[store.url]?.sessions ?? {})) {
        const counted = Object.values(ss.segments).reduce((a, b) => a + b, 0);
        expect(segs.filter((f) => f.includes(`/session=${id}/`)).length, `segments of ${id} in the store`).toBeGreaterThanOrEqual(counted);
        checked++;
      }
    };
    const slow = new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== "upload" || typeof v !== "function") return v;
        return async (...args: unknown[]) => {
          check();
          most = Math.max(most, ++inFlight);
          try {
            await sleep(400);
            return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            inFlight--;
          }
        };
      },
    });
    const a = await push(localRoot(root), slow, { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1" });
    expect(a.sessions).toBe(sessions.length);
    expect(most).toBeGreaterThanOrEqual(2);
    expect(most).toBeLessThanOrEqual(4);
    expect(checked, `push.state checks (${sessions.length} sessions)`).toBeGreaterThan(0);
    // The same bytes as a push of one session at a time.
    const b = openStore(pathToFileURL(join(dir, "fleet-b")).href);
    for (const id of sessions) await push({ ...localRoot(root), sessions: () => [id] }, b, { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1" });
    const segs = (f: string) => walk(f).filter((x) => x.endsWith(".parquet")).map((x) => [x.slice(f.length), readFileSync(x).toString("base64")] as const).sort();
    expect(segs(fleet)).toEqual(segs(join(dir, "fleet-b")));
  });
});
