// A local root the built lake-collector collected from the bundled Claude Code samples (plus what a
// test adds beside them), pushed to a local fleet store: what show, labels and first-run tests read.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { tempDir } from "@lake/tooling/tmp";

/** The built lake-collector bin. */
export const COLLECTOR = fileURLToPath(new URL("../../../collector/bin/lake-collector.js", import.meta.url));
/** The bundled Claude Code samples (a projects directory). */
export const SAMPLE_PROJECTS = fileURLToPath(new URL("../../../../samples/claude/projects", import.meta.url));

/** Run the built lake-collector; its stdout, or an error with its stderr when it exits non-zero. */
export function collector(args: readonly string[]): string {
  if (!existsSync(fileURLToPath(new URL("../../../collector/dist/cli.js", import.meta.url)))) {
    throw new Error("lake-collector is not built: run `pnpm turbo run build --filter=lake-collector...` first");
  }
  const r = spawnSync(process.execPath, [COLLECTOR, ...args], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  if (r.status !== 0) throw new Error(`lake-collector ${args[0]} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Where a collected-samples test keeps its root, store and cache, and the reader arguments naming them. */
export interface CollectedSamples {
  readonly dir: string;
  readonly root: string;
  /** The fleet store's file:// URL. */
  readonly store: string;
  /** The vendor tree's Claude Code projects directory (the samples, copied). */
  readonly projects: string;
  /** The reader's environment: its own cache. */
  readonly env: NodeJS.ProcessEnv;
  /** `--root ROOT --store STORE`. */
  readonly args: readonly string[];
  /** Collect the projects directory into the root (rounds published), then push it as agent host-t. */
  collectAndPush(): void;
}

/** A fresh directory with the samples copied in as a Claude Code projects tree; nothing collected yet. */
export function collectedSamples(name: string): CollectedSamples {
  const dir = tempDir(name);
  const root = join(dir, "root");
  const store = pathToFileURL(join(dir, "fleet")).href;
  const projects = join(dir, "claude", "projects");
  mkdirSync(projects, { recursive: true });
  cpSync(SAMPLE_PROJECTS, projects, { recursive: true });
  return {
    dir,
    root,
    store,
    projects,
    env: { LAKE_READER_CACHE: join(dir, "cache") },
    args: ["--root", root, "--store", store],
    collectAndPush() {
      collector(["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`]);
      collector(["push", "--root", root, "--store", store, "--agent", "host-t"]);
    },
  };
}
