// push learns a seal from the store, whoever wrote it, and pays for that only for sessions with
// something new: one HEAD of _SEALED per such session directory, nothing for unchanged sessions.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { encodeSealed, openStore, parseKey, type ObjectStore } from "@lake/layout";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { localRoot } from "../src/internal/local-root.js";
import { push } from "../src/internal/push.js";
import { runCli, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

/** The store, with every call it gets counted by method name (and the keys HEADed). */
function counted(store: ObjectStore): { store: ObjectStore; calls: Map<string, number>; heads: string[]; reset(): void } {
  const calls = new Map<string, number>();
  const heads: string[] = [];
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function" || typeof prop !== "string") return v;
      return (...args: unknown[]) => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        if (prop === "head") heads.push(String(args[0]));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls, heads, reset: () => (calls.clear(), (heads.length = 0)) };
}

/** A user line appended to a Claude Code transcript of session `sid`. */
function appendUser(file: string, sid: string, n: number): void {
  appendFileSync(file, JSON.stringify({ parentUuid: null, isSidechain: false, type: "user", sessionId: sid, uuid: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`, timestamp: `2026-02-12T10:00:0${n}.000Z`, message: { role: "user", content: `grown ${n}` } }) + "\n");
}

describe("push and a seal it did not write", () => {
  it("a session sealed in the store continues in session=<id>.2; unchanged sessions cost no request", async () => {
    const dir = tempDir("seal-grow");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    const fleet = join(dir, "fleet");
    const env = { HOME: join(dir, "home") };
    const collect = async () => expect((await runCli(["collect", "--root", root, ...tree.flags], env)).code).toBe(0);
    await collect();
    const c = counted(openStore(pathToFileURL(fleet).href));
    const opts = { agent: "host-a", sealIdleSeconds: 86_400, fleetId: "f1" };
    const first = await push(localRoot(root), c.store, opts);
    expect(first.sessions).toBeGreaterThanOrEqual(4);
    expect(c.heads).toEqual([]); // nothing was pushed before: no part to ask about

    // Nothing new: no HEAD, no listing of sessions/.
    c.reset();
    const noop = await push(localRoot(root), c.store, opts);
    expect(noop).toMatchObject({ sessions: 0, segments: 0, learned: 0 });
    expect(c.heads).toEqual([]);
    expect(c.calls.get("upload") ?? 0).toBe(0);

    // Seal tool_heavy's directory the way lake-maint seal does (create-only, its real counts).
    const tool = join(tree.claude, "-home-marco-projects-spotter", "tool_heavy.jsonl");
    const toolSid = (JSON.parse(readFileSync(tool, "utf8").trimEnd().split("\n").pop()!) as { sessionId: string }).sessionId;
    const big = join(tree.claude, "-home-marco-projects-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl");
    const bigSid = "258c7280-ae70-4798-800f-63464d01a85d";
    const segOf = (sid: string) => walk(fleet).filter((f) => f.includes(`/session=${sid}/seg-`) && f.endsWith(".parquet"));
    const sessionsState = () => Object.values((JSON.parse(readFileSync(join(root, "push.state"), "utf8")) as { receivers: Record<string, { sessions: Record<string, { part: number; rows: Record<string, number> }> }> }).receivers)[0]!.sessions;
    expect(segOf(toolSid)).toHaveLength(1);
    writeFileSync(join(segOf(toolSid)[0]!, "..", "_SEALED"), encodeSealed({ sealed_at: "2026-02-13T00:00:00.000Z", segments: 1, rows: sessionsState()[toolSid]!.rows["claude-code"]!, sealed_by: "lake-maint" }));

    // Two sessions grow: tool_heavy (sealed in the store) and the big one (not sealed). The codex and
    // gemini sessions do not: they are not asked about.
    appendUser(tool, toolSid, 1);
    appendUser(big, bigSid, 2);
    await collect();
    c.reset();
    const grown = await push(localRoot(root), c.store, opts);
    expect(grown.learned).toBe(1);
    expect(grown.sessions).toBe(2);
    expect(c.heads.map((k) => parseKey(k)?.kind)).toEqual(["sealed", "sealed"]);
    expect(c.heads.map((k) => /session=([^/]+)\//.exec(k)![1]).sort()).toEqual([bigSid, toolSid].sort());
    // Nothing was added to the sealed directory; its new records are in session=<id>.2. The unsealed
    // session grew in place.
    expect(segOf(toolSid)).toHaveLength(1);
    expect(walk(fleet).filter((f) => f.includes(`/session=${toolSid}.2/seg-`) && f.endsWith(".parquet"))).toHaveLength(1);
    expect(segOf(bigSid)).toHaveLength(2);
    expect(sessionsState()[toolSid]!.part).toBe(2);
    expect(sessionsState()[bigSid]!.part).toBe(1);

    // And a push after that is a no-op again.
    c.reset();
    expect(await push(localRoot(root), c.store, opts)).toMatchObject({ sessions: 0, learned: 0 });
    expect(c.heads).toEqual([]);
    c.store.close();
  }, 120_000);
});
