// Installing lake as a user does: `pnpm pack` every package and app (workspace:* becomes the real
// version), then one `npm install -g` of all the tarballs into an empty prefix — npm resolves the
// @lake/* dependencies to the tarballs given beside them and every third-party dependency from the
// npm registry, as a user gets them — then the root README's quick start from PATH alone (the
// prefix's bin first, nothing of the workspace on it): collect, push, usage daily, show, search,
// each exiting 0, with `usage daily --json` equal to the workspace build's answer over its own
// collect and push of the same transcripts; and `hooks install` from the installed copy, whose
// command runs from `sh` with PATH=/usr/bin:/bin.
//
// better-sqlite3 would compile SQLite once per app that depends on it (three trees in a global
// install, minutes each on a small machine); the binary the workspace already built from the same
// version is handed to its prebuild-install as a local prebuild (its documented offline path,
// npm_config_better_sqlite3_local_prebuilds), which loads it before accepting it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const SAMPLES = join(REPO, "samples");
const SID = "258c7280-ae70-4798-800f-63464d01a85d";
const APPS = ["lake-collector", "lake-maint", "lake-reader"] as const;
/** Every published package and app (a private one, @lake/testdata, is never packed). */
const PACKAGE_DIRS = ["packages", "apps"]
  .flatMap((d) => readdirSync(join(REPO, d)).map((n) => join(REPO, d, n)))
  .filter((d) => (JSON.parse(readFileSync(join(d, "package.json"), "utf8")) as { private?: boolean }).private !== true);

interface Packed {
  readonly name: string;
  readonly version: string;
  readonly file: string;
  readonly manifest: Record<string, unknown>;
  readonly entries: string[];
}

const dir = tempDir("lake-install");
const prefix = join(dir, "prefix");
const packed: Packed[] = [];
/** What npm install -g printed on stderr. */
let npmStderr = "";
afterAll(cleanupTempDirs);

function sh(cmd: string, args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20, ...opts });
}

function must(r: SpawnSyncReturns<string>, what: string): string {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status}: ${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

/** The commands of the README's quick start (the second sh block under its heading), comments dropped. */
function quickStart(): string[] {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Quick start on your machine"));
  const blocks = [...section.slice(0, section.indexOf("\n## ", 5)).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks[1]!.split("\n").map((l) => l.replace(/\s+#.*$/, "").trim()).filter((l) => l !== "");
}

/** The options of the README's `npm install -g` line (the first sh block under the quick start's heading). */
function readmeInstallOptions(): string[] {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Quick start on your machine"));
  const line = /```sh\n[\s\S]*?^npm install -g (.*)$/m.exec(section)![1]!;
  return line.split(/\s+/).filter((w) => w.startsWith("--"));
}

/** better-sqlite3 as the workspace built it, packed the way prebuild-install expects a prebuild. */
function localPrebuild(into: string): string {
  const req = createRequire(join(REPO, "apps", "reader", "package.json"));
  const pkgDir = dirname(req.resolve("better-sqlite3/package.json"));
  const version = (JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string }).version;
  mkdirSync(into, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  must(sh("tar", ["czf", join(into, name), "-C", pkgDir, "build/Release/better_sqlite3.node"]), "tar czf (prebuild)");
  return into;
}

/** A home directory holding the bundled samples where Claude Code, Codex and Gemini CLI keep them. */
function sampleHome(home: string): string {
  cpSync(join(SAMPLES, "claude", "projects"), join(home, ".claude", "projects"), { recursive: true });
  cpSync(join(SAMPLES, "codex", "sessions"), join(home, ".codex", "sessions"), { recursive: true });
  cpSync(join(SAMPLES, "gemini", "tmp"), join(home, ".gemini", "tmp"), { recursive: true });
  return home;
}

/** The quick start's environment: root, store and cache in temp dirs, the samples as the vendor stores. */
function userEnv(name: string, path: string): NodeJS.ProcessEnv {
  const base = join(dir, name);
  mkdirSync(base, { recursive: true });
  return {
    PATH: path,
    HOME: sampleHome(join(base, "home")),
    LAKE_ROOT: join(base, "root"),
    LAKE_STORE: pathToFileURL(join(base, "fleet")).href,
    LAKE_READER_CACHE: join(base, "cache"),
    LAKE_AGENT: "laptop",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
}

describe("npm pack + npm install -g, then the README's quick start from PATH", () => {
  beforeAll(() => {
    const tarballs = join(dir, "tarballs");
    mkdirSync(tarballs, { recursive: true });
    for (const pkgDir of PACKAGE_DIRS) {
      const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { name: string; version: string };
      must(sh("pnpm", ["pack", "--pack-destination", tarballs], { cwd: pkgDir }), `pnpm pack (${manifest.name})`);
      const file = join(tarballs, `${manifest.name.replace(/^@/, "").replace("/", "-")}-${manifest.version}.tgz`);
      const entries = must(sh("tar", ["tzf", file]), `tar tzf ${file}`).trim().split("\n");
      const packedManifest = JSON.parse(must(sh("tar", ["xzf", file, "-O", "package/package.json"]), "tar xzf")) as Record<string, unknown>;
      packed.push({ name: manifest.name, version: manifest.version, file, manifest: packedManifest, entries });
    }
    // --prefix moves npm's global config to <prefix>/etc/npmrc: keep the machine's (a cafile, a
    // registry mirror), as a user's `npm install -g` would use it.
    const globalconfig = must(sh("npm", ["config", "get", "globalconfig"]), "npm config get globalconfig").trim();
    const npmEnv: NodeJS.ProcessEnv = {
      ...process.env,
      npm_config_globalconfig: process.env.npm_config_globalconfig ?? globalconfig,
      npm_config_nodedir: process.env.npm_config_nodedir ?? "/usr",
      npm_config_better_sqlite3_local_prebuilds: localPrebuild(join(dir, "prebuilds")),
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    };
    const install = sh("npm", ["install", "--global", "--prefix", prefix, "--prefer-offline", ...readmeInstallOptions(), ...packed.map((p) => p.file)], { cwd: dir, env: npmEnv });
    must(install, "npm install -g");
    npmStderr = install.stderr;
  }, 600_000);

  it("the README's install line allows every install script the tree has: npm warns about none", () => {
    expect(readmeInstallOptions()).toEqual(["--allow-scripts=better-sqlite3"]);
    expect(npmStderr).not.toMatch(/not yet covered by allowScripts/);
    expect(npmStderr).not.toMatch(/allowScripts|allow-scripts/);
  });

  it("every tarball ships dist without .tsbuildinfo or maps, and real versions for workspace dependencies", () => {
    expect(packed.map((p) => p.name).sort()).toEqual(PACKAGE_DIRS.map((d) => (JSON.parse(readFileSync(join(d, "package.json"), "utf8")) as { name: string }).name).sort());
    for (const p of packed) {
      expect(p.entries, p.name).toContain("package/dist/index.js");
      expect(p.entries.filter((e) => e.endsWith(".tsbuildinfo") || e.endsWith(".map")), p.name).toEqual([]);
      expect(JSON.stringify(p.manifest), p.name).not.toContain("workspace:");
      for (const [dep, range] of Object.entries((p.manifest.dependencies ?? {}) as Record<string, string>)) {
        if (dep.startsWith("@lake/")) expect(range, `${p.name} → ${dep}`).toBe(packed.find((q) => q.name === dep)!.version);
      }
    }
  });

  it("installs each @lake package once, from its tarball, beside the apps (no copy from the registry)", () => {
    const lib = join(prefix, "lib", "node_modules");
    for (const p of packed) {
      const installed = JSON.parse(readFileSync(join(lib, p.name, "package.json"), "utf8")) as Record<string, unknown>;
      expect(installed.name).toBe(p.name);
      expect(installed.dependencies ?? {}, p.name).toEqual(p.manifest.dependencies ?? {});
    }
    const nested = must(sh("find", [lib, "-path", "*/node_modules/*/node_modules/@lake", "-o", "-path", "*/node_modules/*/node_modules/lake-*"]), "find").trim();
    expect(nested).toBe("");
    expect(existsSync(join(lib, "@lake", "wal", "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"))).toBe(true);
  });

  it("puts the three commands in the prefix's bin, each answering --help", () => {
    for (const app of APPS) {
      const r = sh(join(prefix, "bin", app), ["--help"], { env: { PATH: `${prefix}/bin:/usr/bin:/bin` } });
      expect(r.status, `${app} --help: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: ${app} `, "m"));
    }
  });

  it("runs collect, push, usage daily, show and search from PATH alone; usage daily --json equals the workspace build's", () => {
    const path = [join(prefix, "bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(":");
    const env = userEnv("user", path);
    const run = (cmd: string, ...args: string[]) => {
      const r = sh(cmd, args, { cwd: env.HOME!, env });
      expect(r.status, `${cmd} ${args.join(" ")}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    expect(must(sh("sh", ["-c", "for c in lake-collector lake-reader lake-maint; do command -v $c; done"], { env }), "command -v").trim().split("\n")).toEqual(
      ["lake-collector", "lake-reader", "lake-maint"].map((a) => join(prefix, "bin", a)),
    );
    // The README's quick start, line by line, as a user pastes it.
    const lines = quickStart();
    expect(lines.map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual(["lake-collector collect", "lake-collector push", "lake-reader usage", "lake-reader show", "lake-reader search"]);
    const outputs = lines.map((line) => {
      const r = sh("sh", ["-c", line], { cwd: env.HOME!, env });
      expect(r.status, `${line}: ${r.stderr}`).toBe(0);
      return r.stdout;
    });
    expect(outputs[2]).toMatch(/\d{4}-\d{2}-\d{2}/);
    expect(outputs[3]).toContain(SID.slice(0, 8));
    expect(outputs[4]).toContain(SID.slice(0, 8));
    const installed = JSON.parse(run("lake-reader", "usage", "daily", "--json")) as unknown;

    // The workspace build over its own root and store, collected from the same samples.
    const wsEnv = userEnv("workspace", path);
    const bin = (app: string) => join(REPO, "apps", app.replace("lake-", ""), "bin", `${app}.js`);
    const ws = (app: string, ...args: string[]) => must(sh(process.execPath, [bin(app), ...args], { cwd: wsEnv.HOME!, env: wsEnv }), `${app} ${args[0]}`);
    ws("lake-collector", "collect");
    ws("lake-collector", "push");
    const workspace = JSON.parse(ws("lake-reader", "usage", "daily", "--json")) as unknown;
    expect(installed).toEqual(workspace);
    expect(JSON.stringify(installed)).toMatch(/"total_tokens":\s*[1-9]/);
  });

  it("hooks install from the installed copy writes a command that runs from sh with PATH=/usr/bin:/bin", () => {
    const env = { PATH: `${join(prefix, "bin")}:/usr/bin:/bin`, HOME: join(dir, "hooks-home") };
    const settings = join(dir, "hooks-home", ".claude", "settings.json");
    must(sh("lake-collector", ["hooks", "install"], { env }), "lake-collector hooks install");
    const hooks = (JSON.parse(readFileSync(settings, "utf8")) as { hooks: Record<string, { hooks: { command: string }[] }[]> }).hooks;
    const command = hooks.SessionStart![0]!.hooks[0]!.command;
    expect(command).toBe(`${realpathSync(process.execPath)} ${join(prefix, "lib", "node_modules", "lake-collector", "bin", "lake-collector.js")} hook`);
    const root = join(dir, "hooks-root");
    const event = { session_id: "0b5e4a2c-1d3f-4e6a-8b9c-0d1e2f3a4b5c", hook_event_name: "SessionStart", cwd: "/tmp" };
    const r = spawnSync("env", ["-i", "PATH=/usr/bin:/bin", `LAKE_ROOT=${root}`, "sh", "-c", command], { input: JSON.stringify(event), encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(root, "_hooks", "spool", `${event.session_id}.wal`))).toBe(true);
  });
});
