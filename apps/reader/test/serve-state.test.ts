// What `serve` keeps between requests is kept for one fleet state only: the built lake-reader
// serves a fleet the real lake-collector pushed; after another push, a seal and a compaction (each
// a new fleet state: new segments, _SEALED markers, a new generation), the very next request of
// every page answers what the CLI answers for the changed fleet — never the kept answer.
import { renameSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { collectedSamples } from "./support/collected.js";
import { filesUnder } from "./support/fixtures.js";
import { maint } from "./support/fleet.js";
import { runJson } from "./support/run.js";
import { startServe, type Served } from "./support/served.js";

const KEPT_SESSION = "258c7280-ae70-4798-800f-63464d01a85d";
const NEW_SESSION = "d6e0bada-1959-4eec-a9d2-0bfade768d8f";
/** A word only the second session's transcript has. */
const NEW_WORD = "scrollbar";

let served: Served | undefined;
afterAll(async () => {
  await served?.stop();
  cleanupTempDirs();
});

function get<T>(base: string, path: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(body) as T) : reject(new Error(`${path}: ${res.statusCode} ${body}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

type Row = Record<string, unknown>;
type Daily = { daily: Row[]; totals: Row };
type Blocks = { blocks: Row[]; totals: Row };
type Search = { events: { session_id: string }[] };

describe("serve keeps answers for one fleet state", () => {
  it("after a push, a seal and a compaction the next request answers the changed fleet, as the CLI does", async () => {
    const s = collectedSamples("reader-serve-state");
    // The first push holds one session; the second transcript comes with the next push.
    const aside = join(s.dir, "later.jsonl");
    const later = join(s.projects, "-home-marco-projects-spotter", "tool_heavy.jsonl");
    renameSync(later, aside);
    s.collectAndPush();
    const env = { ...s.env, TZ: "UTC" };
    const cli = <T>(args: readonly string[]) => runJson<T>([...args, ...s.args], env);
    served = await startServe(s.args, env);
    await served.ready;
    const url = served.url;
    const page = async () => ({
      daily: await get<Daily>(url, "api/usage/daily"),
      blocks: await get<Blocks>(url, "api/usage/blocks"),
      sessions: await get<Row[]>(url, "api/sessions"),
      responses: await get<{ responses: Row[] }>(url, `api/responses/${NEW_SESSION}`),
      search: await get<Search>(url, `api/search?q=${NEW_WORD}`),
    });
    const expectCli = async (p: Awaited<ReturnType<typeof page>>) => {
      expect(p.daily).toEqual(await cli(["usage", "daily", "--json"]));
      expect(p.blocks).toEqual(await cli(["usage", "blocks", "--json"]));
      expect(p.sessions).toEqual(JSON.parse(JSON.stringify(await cli(["sessions", "--json"]))));
    };

    const before = await page();
    // Asked twice, the kept answers are the same.
    expect(await page()).toEqual(before);
    await expectCli(before);
    expect(before.sessions.map((r) => r.session_id)).toEqual([KEPT_SESSION]);
    expect(before.responses.responses).toEqual([]);
    expect(before.search.events).toEqual([]);

    // A push: the new session, its usage and its words, on the next request.
    renameSync(aside, later);
    s.collectAndPush();
    const pushed = await page();
    await expectCli(pushed);
    expect(pushed.sessions.map((r) => r.session_id).sort()).toEqual([KEPT_SESSION, NEW_SESSION].sort());
    expect(Number(pushed.daily.totals.total_tokens)).toBeGreaterThan(Number(before.daily.totals.total_tokens));
    expect(pushed.responses.responses.length).toBeGreaterThan(0);
    expect(pushed.search.events.map((e) => e.session_id)).toContain(NEW_SESSION);
    expect(pushed.sessions.every((r) => r.sealed === false)).toBe(true);

    // Sealed and compacted by the real lake-maint: a new generation, read on the next request.
    const store = ["--store", s.store];
    maint(["seal", ...store, "--idle", "0"]);
    const sealed = await get<Row[]>(url, "api/sessions");
    expect(sealed.every((r) => r.sealed === true)).toBe(true);
    maint(["compact", ...store]);
    const fleet = fileURLToPath(s.store);
    expect(filesUnder(join(fleet, "sessions", "compacted")).some((f) => f.endsWith("_COMPACTED"))).toBe(true);
    const compacted = await page();
    await expectCli(compacted);
    // The same records, now read from the generation: the same answers as from bronze.
    expect(compacted.daily).toEqual(pushed.daily);
    expect(compacted.responses).toEqual(pushed.responses);
    expect(compacted.sessions).toEqual(sealed);
  }, 180_000);
});
