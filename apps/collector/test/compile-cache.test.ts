// The bin's V8 code cache (bin/compile-cache.js): written once per command and build, then used and
// left as it is; a damaged one is refused by V8 and written again; none written by a run that ends
// with V8's flags changed (a watch that lands); the results never change; off when asked; never for `hook`; another build's caches
// removed when this build first writes.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { runCli, vendorTree } from "./helpers.js";

afterAll(cleanupTempDirs);

/** Every cache file under `base`: path relative to it → [mtime ns, bytes]. */
function caches(base: string): Map<string, [bigint, Buffer]> {
  const out = new Map<string, [bigint, Buffer]>();
  if (!existsSync(base)) return out;
  for (const build of readdirSync(base).filter((b) => /^v\d/.test(b))) {
    for (const command of readdirSync(join(base, build))) {
      for (const f of readdirSync(join(base, build, command))) {
        const p = join(base, build, command, f);
        out.set(`${build}/${command}/${f}`, [statSync(p, { bigint: true }).mtimeNs, readFileSync(p)]);
      }
    }
  }
  return out;
}

describe("compile cache", { timeout: 120_000 }, () => {
  it("written by a command's first run, used unchanged by the next, written again when damaged; the output the same each time", async () => {
    const dir = tempDir("compile-cache");
    const cacheHome = join(dir, "cache");
    const base = join(cacheHome, "lake-collector");
    // Another build's caches: removed when this build writes its first.
    mkdirSync(join(base, "v0.0.0-x64-1-1", "collect"), { recursive: true });
    writeFileSync(join(base, "v0.0.0-x64-1-1", "collect", "cli.js"), "old");
    // Anything else there (LAKE_COMPILE_CACHE may name a directory that holds more) is left alone.
    mkdirSync(join(base, "other-tool"));
    writeFileSync(join(base, "notes.txt"), "mine");
    const { flags, claude } = vendorTree(join(dir, "vendor"));
    const env = { XDG_CACHE_HOME: cacheHome, LAKE_COMPILE_CACHE: "", HOME: join(dir, "home") };
    const collect = async () => {
      const r = await runCli(["collect", "--root", join(dir, "root"), "--sources-only", ...flags, "--json"], env);
      expect(r.code, r.stderr).toBe(0);
      const s = JSON.parse(r.stdout) as Record<string, unknown>;
      return { sessions: s.sessions, records: s.records, landed_files: s.landed_files };
    };
    // The first pass lands (and puts back the V8 flags it set for its heap as it ends): it writes the
    // caches of every chunk it loaded, the session pass's among them.
    const first = await collect();
    expect(first.landed_files).toBeGreaterThan(0);
    const written = caches(base);
    const names = [...written.keys()];
    expect(names.filter((n) => n.startsWith("v0.0.0-"))).toEqual([]);
    expect(existsSync(join(base, "other-tool"))).toBe(true);
    expect(readFileSync(join(base, "notes.txt"), "utf8")).toBe("mine");
    expect(names.some((n) => /\/collect\/cli\.js$/.test(n))).toBe(true);
    expect(names.some((n) => /\/collect\/collect-pass-[^/]+\.js$/.test(n))).toBe(true);
    for (const [, [, bytes]] of written) expect(bytes.length).toBeGreaterThan(100);
    const second = await collect();
    expect(second).toMatchObject({ sessions: first.sessions, landed_files: 0 });

    // The passes after it compile each chunk with the cache the first left: none is written again
    // (V8 took every one it was given).
    const again = await collect();
    expect(again).toEqual(second);
    const after = caches(base);
    expect([...after.keys()].sort()).toEqual(names.sort());
    for (const [name, [mtime, bytes]] of after) {
      const before = written.get(name)!;
      expect(mtime, name).toBe(before[0]);
      expect(bytes.equals(before[1]), name).toBe(true);
    }

    // A damaged cache: refused by V8, the command's result the same, the cache written anew.
    const cli = names.find((n) => /\/collect\/cli\.js$/.test(n))!;
    writeFileSync(join(base, cli), Buffer.alloc(4096, 7));
    expect(await collect()).toEqual(again);
    const healed = readFileSync(join(base, cli));
    expect(healed.equals(Buffer.alloc(4096, 7))).toBe(false);
    expect(healed.length).toBeGreaterThan(100);

    // A watch that lands keeps the flags it set (it would run on), changed since it compiled its first
    // chunk without a cache (cli.js): it writes none.
    const transcript = readdirSync(claude, { recursive: true, encoding: "utf8" }).find((f) => f.endsWith(".jsonl"))!;
    const line = readFileSync(join(claude, transcript), "utf8").split("\n")[0]!;
    appendFileSync(join(claude, transcript), line.replace(/"uuid":"[^"]+"/, '"uuid":"00000000-0000-4000-8000-00000000c0de"') + "\n");
    const watched = await runCli(["watch", "--root", join(dir, "root"), "--sources-only", ...flags, "--max-passes", "1", "--json"], env);
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout).toMatch(/"landed_files":[1-9]/);
    expect([...caches(base).keys()].filter((n) => n.includes("/watch/"))).toEqual([]);

    // `status` has its own directory; a hook writes none.
    expect((await runCli(["status", "--root", join(dir, "root"), "--sources-only", "--json"], env)).code).toBe(0);
    expect([...caches(base).keys()].some((n) => /\/status\/cli\.js$/.test(n))).toBe(true);
    const hook = await runCli(["hook", "--root", join(dir, "root")], env, JSON.stringify({ session_id: "s1", hook_event_name: "Stop" }));
    expect(hook.code, hook.stderr).toBe(0);
    expect([...caches(base).keys()].filter((n) => n.includes("/hook/"))).toEqual([]);
  });

  it("LAKE_COMPILE_CACHE=off writes none; LAKE_COMPILE_CACHE=DIR writes there", async () => {
    const dir = tempDir("compile-cache-env");
    const cacheHome = join(dir, "cache");
    const off = await runCli(["status", "--root", join(dir, "root"), "--sources-only", "--json"], { XDG_CACHE_HOME: cacheHome, LAKE_COMPILE_CACHE: "off" });
    expect(off.code, off.stderr).toBe(0);
    expect(existsSync(cacheHome)).toBe(false);
    const own = join(dir, "own");
    const on = await runCli(["status", "--root", join(dir, "root"), "--sources-only", "--json"], { XDG_CACHE_HOME: cacheHome, LAKE_COMPILE_CACHE: own });
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toBe(off.stdout);
    expect(existsSync(cacheHome)).toBe(false);
    expect([...caches(own).keys()].some((n) => /\/status\/cli\.js$/.test(n))).toBe(true);
  });
});
