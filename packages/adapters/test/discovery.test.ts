import { afterAll, describe, expect, it } from "vitest";
import { cpSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadedModules, MODULES_IMPORT } from "@lake/tooling/modules";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { AdaptersError, claudeCodeAdapter, codexAdapter, geminiAdapter, getAdapter, globToRegExp, hookAdapter, isAdaptersError, parseFile, readSession } from "../src/index.js";
import { FIXTURES } from "./helpers.js";
import { lineAdapter, listDiscoverers, readLines as discoverReadLines } from "../src/discover.js";
import { readLines } from "../src/index.js";

afterAll(cleanupTempDirs);

function fakeHome(): string {
  const home = tempDir("adapters-home");
  const projects = join(home, ".claude", "projects");
  cpSync(join(FIXTURES, "claude-code", "marot-spotter"), join(projects, "-home-marot"), { recursive: true });
  cpSync(join(FIXTURES, "claude-code", "codemie-code", "-tmp-private"), join(projects, "-tmp-private"), { recursive: true });
  const codexFile = "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl";
  mkdirSync(join(home, ".codex", "sessions", "2026", "02", "23"), { recursive: true });
  mkdirSync(join(home, ".codex", "archived_sessions"), { recursive: true });
  cpSync(join(FIXTURES, "codex", "madshn-localpush", "raw", "sessions", codexFile), join(home, ".codex", "sessions", "2026", "02", "23", codexFile));
  cpSync(join(FIXTURES, "codex", "madshn-localpush", "raw", "sessions", codexFile), join(home, ".codex", "archived_sessions", codexFile));
  mkdirSync(join(home, ".gemini", "tmp", "abc", "chats"), { recursive: true });
  cpSync(join(FIXTURES, "gemini", "codemie-code", "session-2025-12-01T21-45-5b959dae.json"), join(home, ".gemini", "tmp", "abc", "chats", "session-2025-12-01T21-45-5b959dae.json"));
  return home;
}

describe("discovery", () => {
  const home = fakeHome();
  it("lists Claude Code sessions in both subagent layouts with streams, kinds and modes", async () => {
    const d = await claudeCodeAdapter.discover({ home, env: {} });
    expect(d.roots).toEqual([join(home, ".claude", "projects")]);
    const by = (rel: string) => d.sources.find((s) => s.rel === rel)!;
    expect(by("-home-marot/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl")).toMatchObject({ session_id: "258c7280-ae70-4798-800f-63464d01a85d", stream: "a881341", kind: "transcript", mode: "append" });
    expect(by("-home-marot/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl").stream).toBe("acompact-fffbd0");
    expect(by("-tmp-private/agent-36541525.jsonl")).toMatchObject({ session_id: "4c2ddfdc-b619-4525-8d03-1950fb1b0257", stream: "36541525" });
    expect(by("-home-marot/258c7280-ae70-4798-800f-63464d01a85d.jsonl")).toMatchObject({ stream: "main", mode: "append" });
    expect(by("-home-marot/short.jsonl").session_id).toBe("55604662-cf2a-4331-851a-ec234028f8ca");
    expect(d.problems).toEqual([]);
    // Discovery describes a main transcript named by its session id without a promise: as describe does, every file.
    expect(d.sources.filter((s) => s.stream === "main" && s.session_id === s.rel.replace(/.*\//, "").replace(/\.jsonl$/, "")).length).toBeGreaterThan(0);
    for (const s of d.sources) {
      const { root, size, mtimeMs, ino, ...ref } = s;
      expect(await claudeCodeAdapter.describe(s.path, root)).toEqual(ref);
    }
  });

  it("a root given unnormalized (relative, `./`, `..`, trailing or doubled slashes) gives each source the path path.join gives", async () => {
    const projects = join(home, ".claude", "projects");
    const plain = await claudeCodeAdapter.discover({ roots: [projects] });
    const cwd = process.cwd();
    process.chdir(home);
    try {
      for (const root of [".claude/projects", "./.claude/projects/", ".claude//projects//", `.claude/x/../projects`, `${projects}/`]) {
        const d = await claudeCodeAdapter.discover({ roots: [root] });
        expect(d.problems).toEqual([]);
        expect(d.sources.map((s) => s.path)).toEqual(d.sources.map((s) => join(root, s.rel)));
        expect(d.sources.map((s) => s.rel)).toEqual(plain.sources.map((s) => s.rel));
      }
      process.chdir(projects);
      const here = await claudeCodeAdapter.discover({ roots: ["."] });
      expect(here.sources.map((s) => s.path)).toEqual(plain.sources.map((s) => s.rel));
    } finally {
      process.chdir(cwd);
    }
  });

  it("include/exclude globs match the relative path or the session id", async () => {
    const only = await claudeCodeAdapter.discover({ home, env: {}, include: ["-tmp-private/**"] });
    expect(only.sources.map((s) => s.rel).sort()).toEqual(["-tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl", "-tmp-private/agent-36541525.jsonl", "-tmp-private/agent-50243ee8.jsonl"]);
    const ex = await claudeCodeAdapter.discover({ home, env: {}, exclude: ["258c7280-*", "**/agent-*"] });
    expect(ex.sources.some((s) => s.session_id.startsWith("258c7280") || s.rel.includes("agent-"))).toBe(false);
    expect(globToRegExp("a/{b,c}/*.jsonl").test("a/c/x.jsonl")).toBe(true);
    expect(() => globToRegExp("a{b")).toThrow(/unclosed/);
  });

  it("a Codex file in sessions/ and archived_sessions/ is one session read once", async () => {
    const d = await codexAdapter.discover({ home, env: {} });
    expect(d.sources.map((s) => s.session_id)).toEqual(["019c8bfe-ec25-79e0-97d7-bda6a9c575ff", "019c8bfe-ec25-79e0-97d7-bda6a9c575ff"]);
    const s = await readSession("codex", "019c8bfe-ec25-79e0-97d7-bda6a9c575ff", { home, env: {} });
    expect(s.sources).toHaveLength(2);
    const { usageBySession } = await import("@lake/events");
    expect(usageBySession(s.records).get("019c8bfe-ec25-79e0-97d7-bda6a9c575ff")?.usage).toEqual({ input_tokens: 59525, cached_input_tokens: 238848, output_tokens: 1123, reasoning_tokens: 483 });
  });

  it("Gemini legacy JSON is a snapshot source; an unreadable root is a problem, not a failure", async () => {
    const d = await geminiAdapter.discover({ home, env: {} });
    expect(d.sources.map((s) => [s.rel, s.session_id, s.mode])).toEqual([["abc/chats/session-2025-12-01T21-45-5b959dae.json", "5b959dae-8655-4cd1-b10f-720b8c336ea2", "snapshot"]]);
    const notDir = join(home, "file");
    writeFileSync(notDir, "x");
    const bad = await geminiAdapter.discover({ roots: [notDir] });
    expect(bad.problems.length).toBe(1);
    expect(bad.problems[0]!.path).toBe(notDir);
    const missing = await geminiAdapter.discover({ roots: [join(home, "nope")] });
    expect(missing).toMatchObject({ sources: [], problems: [] });
  });

  it("reading never changes a vendor file", async () => {
    const f = join(home, ".claude", "projects", "-home-marot", "short.jsonl");
    const before = { text: readFileSync(f), mtime: statSync(f).mtimeMs, mode: statSync(f).mode };
    await claudeCodeAdapter.discover({ home, env: {} });
    for await (const _ of parseFile(f)) void _;
    expect(readFileSync(f).equals(before.text)).toBe(true);
    expect(statSync(f).mtimeMs).toBe(before.mtime);
    expect(statSync(f).mode).toBe(before.mode);
  });

  it("default roots follow the environment", () => {
    expect(claudeCodeAdapter.defaultRoots({ CLAUDE_CONFIG_DIR: "/c" }, "/h")).toEqual(["/c/projects"]);
    expect(codexAdapter.defaultRoots({}, "/h")).toEqual(["/h/.codex"]);
    expect(geminiAdapter.defaultRoots({}, "/h")).toEqual(["/h/.gemini/tmp"]);
    expect(hookAdapter.defaultRoots({ LAKE_ROOT: "/l" }, "/h")).toEqual(["/l/_hooks"]);
    expect(hookAdapter.defaultRoots({}, "/h")).toEqual(["/h/.local/share/lake/_hooks"]);
  });
});

describe("@lake/adapters/discover", () => {
  it("lineAdapter is getAdapter's object for every runtime but broca; the subpath loads no zod and no @lake/wal codec", () => {
    for (const rt of ["claude-code", "codex", "gemini", "hook"]) expect(lineAdapter(rt)).toBe(getAdapter(rt));
    expect(lineAdapter("broca")).toBeUndefined();
    expect(lineAdapter("nope")).toBeUndefined();
    expect(listDiscoverers().map((d) => d.runtime)).toEqual(["claude-code", "codex", "gemini", "hook", "broca"]);
    expect(discoverReadLines).toBe(readLines);
    // The built subpath in a child process that names every module it loads.
    const entry = fileURLToPath(new URL("../dist/discover.js", import.meta.url));
    const r = spawnSync(process.execPath, ["--import", MODULES_IMPORT, "--input-type=module", "-e", `const m = await import(${JSON.stringify(entry)}); if (m.lineAdapter("claude-code").runtime !== "claude-code") process.exit(9);`], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const loaded = loadedModules(r.stderr).modules;
    expect(loaded.some((u) => u.endsWith("/adapters/dist/internal/claude.js"))).toBe(true);
    expect(loaded.filter((u) => /\/zod\/|\/wal\/dist\/index\.js$|\/wal\/dist\/internal\/(records|codec)\.js$|\/adapters\/dist\/internal\/broca\.js$/.test(u))).toEqual([]);
  });

  it("discovering every runtime's files (those whose names do not say their session looked into) loads neither node:crypto nor node:fs/promises", () => {
    const home = fakeHome();
    const entry = fileURLToPath(new URL("../dist/discover.js", import.meta.url));
    const code = `const m = await import(${JSON.stringify(entry)}); let n = 0; for (const d of m.listDiscoverers()) n += (await d.discover({ home: ${JSON.stringify(home)}, env: {} })).sources.length; console.log(n);`;
    const r = spawnSync(process.execPath, ["--import", MODULES_IMPORT, "--input-type=module", "-e", code], { encoding: "utf8" });
    const { modules, stderr } = loadedModules(r.stderr);
    expect(r.status, stderr).toBe(0);
    expect(Number(r.stdout)).toBeGreaterThan(5);
    expect(modules.filter((u) => u === "node:crypto" || u === "node:fs/promises")).toEqual([]);
  });
});

describe("errors", () => {
  it("unknown runtime: one line, typed code, brand guard works on a structural copy", async () => {
    let err: unknown;
    try {
      getAdapter("nope");
    } catch (e) {
      err = e;
    }
    expect(isAdaptersError(err)).toBe(true);
    expect((err as AdaptersError).code).toBe("UnknownRuntime");
    expect((err as Error).message).not.toContain("\n");
    expect(isAdaptersError(err, "UnknownRuntime") && err.data.runtime).toBe("nope");
    // Across two real builds of the package: apps/reader/test/error-brands.test.ts.
    expect(isAdaptersError(new Error("x"))).toBe(false);
  });

  it("an unreadable file names the path", async () => {
    const p = join(tempDir("adapters-missing"), "gone.jsonl");
    await expect(async () => {
      for await (const _ of parseFile(p, { runtime: "claude-code" })) void _;
    }).rejects.toThrow(p);
  });

  it("a foreign state is refused", () => {
    const src = { runtime: "codex", path: "/x.jsonl", rel: "x.jsonl", session_id: "s", stream: "main", kind: "transcript", mode: "append" as const };
    expect(() => codexAdapter.parseLines(src, [], {})).toThrow(/not a Codex adapter state/);
  });
});
