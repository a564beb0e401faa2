// The optional config file and the order every default is resolved in: environment > config file >
// built-in default (a flag, the caller's, beats all three: apps/reader/test/config.test.ts runs the
// three apps over it).
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadedModules, MODULES_IMPORT } from "@lake/tooling/modules";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { configFile, configuredAgent, defaultLocalRoot, defaultReaderCache, defaultStoreUrl, isLayoutError, legacyDefaultStorePath, readConfig } from "@lake/layout/defaults";

afterAll(cleanupTempDirs);

/** A fresh XDG_CONFIG_HOME holding lake/config.json with `text`. */
function withConfig(text: string): { env: NodeJS.ProcessEnv; file: string } {
  const xdg = tempDir("lake-config");
  mkdirSync(join(xdg, "lake"));
  const file = join(xdg, "lake", "config.json");
  writeFileSync(file, text);
  return { env: { XDG_CONFIG_HOME: xdg }, file };
}

describe("config file", () => {
  it("lives at $XDG_CONFIG_HOME/lake/config.json, else ~/.config/lake/config.json; absent means {}", () => {
    expect(configFile({ XDG_CONFIG_HOME: "/x/conf" }, "/home/u")).toBe("/x/conf/lake/config.json");
    expect(configFile({}, "/home/u")).toBe("/home/u/.config/lake/config.json");
    expect(readConfig({ XDG_CONFIG_HOME: tempDir("lake-noconfig") }, "/home/u")).toEqual({});
  });

  it("sets root, store, reader_cache and agent below the environment and above the built-in defaults", () => {
    const { env } = withConfig(JSON.stringify({ root: "~/lake-data", store: "s3://team-bucket/lake", reader_cache: "/var/cache/lake", agent: "build-box" }));
    const home = "/home/u";
    expect(readConfig(env, home)).toEqual({ root: "/home/u/lake-data", store: "s3://team-bucket/lake", reader_cache: "/var/cache/lake", agent: "build-box" });
    // file > default
    expect(defaultLocalRoot(env, home)).toBe("/home/u/lake-data");
    expect(defaultStoreUrl(env, home)).toBe("s3://team-bucket/lake");
    expect(defaultReaderCache(env, home)).toBe("/var/cache/lake");
    expect(configuredAgent(env, home)).toBe("build-box");
    expect(legacyDefaultStorePath(env, home)).toBe("/home/u/fleet");
    // file > XDG defaults too
    const xdg = { ...env, XDG_DATA_HOME: "/x/share", XDG_CACHE_HOME: "/x/cache" };
    expect(defaultLocalRoot(xdg, home)).toBe("/home/u/lake-data");
    expect(defaultReaderCache(xdg, home)).toBe("/var/cache/lake");
    // env > file
    const over = { ...env, LAKE_ROOT: "/env/root", LAKE_STORE: "file:///env/fleet", LAKE_READER_CACHE: "/env/cache", LAKE_AGENT: "env-agent" };
    expect(defaultLocalRoot(over, home)).toBe("/env/root");
    expect(defaultStoreUrl(over, home)).toBe("file:///env/fleet");
    expect(defaultReaderCache(over, home)).toBe("/env/cache");
    expect(configuredAgent(over, home)).toBe("env-agent");
  });

  it("a root without a store puts the store inside the file's root; an absolute store path becomes a file URL", () => {
    const a = withConfig(JSON.stringify({ root: "/data/lake" }));
    expect(defaultStoreUrl(a.env, "/home/u")).toBe("file:///data/lake/fleet");
    const b = withConfig(JSON.stringify({ store: "/srv/fleet" }));
    expect(defaultStoreUrl(b.env, "/home/u")).toBe("file:///srv/fleet");
    expect(defaultLocalRoot(b.env, "/home/u")).toBe("/home/u/.local/share/lake");
    expect(configuredAgent(b.env, "/home/u")).toBeUndefined();
  });

  it("a bad file is an InvalidConfig error naming the file and the key", () => {
    const cases: [string, RegExp][] = [
      ['{"root": "/a",', /: not JSON \(/],
      ["[1]", /: expected object, received array$/],
      ["null", /: expected object, received null$/],
      ['"/a"', /: expected object, received string$/],
      [JSON.stringify({ root: 7 }), /: root: expected string, received number$/],
      [JSON.stringify({ store: null }), /: store: expected string, received null$/],
      [JSON.stringify({ reader_cache: ["/a"] }), /: reader_cache: expected string, received array$/],
      [JSON.stringify({ reader_cache: "cache" }), /: reader_cache: expected an absolute path or ~\/…$/],
      [JSON.stringify({ agent: "--" }), /: agent: expected a name with a letter or digit$/],
      [JSON.stringify({ colour: "blue", size: 1 }), /: unknown key colour, size \(allowed: root, store, reader_cache, agent\)$/],
      [JSON.stringify({ root: "relative/dir" }), /: root: expected an absolute path or ~\/…$/],
      [JSON.stringify({ store: "ftp://x" }), /: store: expected file:\/\/\/abs\/dir, s3:\/\/bucket\/prefix or an absolute path$/],
      [JSON.stringify({ agent: 7 }), /: agent: /],
      [JSON.stringify({ root: "/a", colour: "blue" }), /: unknown key colour \(allowed: root, store, reader_cache, agent\)$/],
    ];
    for (const [text, want] of cases) {
      const { env, file } = withConfig(text);
      let err: unknown;
      try {
        defaultLocalRoot(env, "/home/u");
      } catch (e) {
        err = e;
      }
      expect(isLayoutError(err, "InvalidConfig"), text).toBe(true);
      const message = (err as Error).message;
      expect(message.startsWith(`${file}: `), message).toBe(true);
      expect(message, text).toMatch(want);
      expect(message.split("\n")).toHaveLength(1);
    }
  });

  it("accepts every form each key allows, and reads the file without loading zod", () => {
    const { env } = withConfig(JSON.stringify({ root: "~/data", store: "/abs/fleet", reader_cache: "/var/cache/lake", agent: "a" }));
    expect(readConfig(env, "/home/u")).toEqual({ root: "/home/u/data", store: "/abs/fleet", reader_cache: "/var/cache/lake", agent: "a" });
    for (const store of ["file:///srv/fleet", "s3://bucket/prefix", "/srv/fleet"]) expect(readConfig(withConfig(JSON.stringify({ store })).env, "/home/u").store).toBe(store);
    expect(readConfig(withConfig("{}").env, "/home/u")).toEqual({});
    // The hook and the status line read it on every run: a child process that does loads no zod.
    const defaults = fileURLToPath(new URL("../dist/defaults.js", import.meta.url));
    const code = `const { readConfig } = await import(${JSON.stringify(defaults)}); console.log(JSON.stringify(readConfig(${JSON.stringify(env)}, "/home/u")));`;
    const r = spawnSync(process.execPath, ["--import", MODULES_IMPORT, "--input-type=module", "-e", code], { encoding: "utf8" });
    const { modules, stderr } = loadedModules(r.stderr);
    expect(r.status, stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ root: "/home/u/data", agent: "a" });
    expect(modules.filter((u) => u.includes("/zod/"))).toEqual([]);
    expect(modules.some((u) => u.endsWith("/layout/dist/internal/defaults.js"))).toBe(true);
  });

  it("the environment wins without reading the file (a broken file does not stop LAKE_ROOT)", () => {
    const { env } = withConfig("not json");
    expect(defaultLocalRoot({ ...env, LAKE_ROOT: "/env/root" }, "/home/u")).toBe("/env/root");
    expect(defaultStoreUrl({ ...env, LAKE_STORE: "s3://b1/p" }, "/home/u")).toBe("s3://b1/p");
  });
});
