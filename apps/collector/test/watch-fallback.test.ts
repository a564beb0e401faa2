// `lake-collector watch` where recursive file watching is not available (played by
// LAKE_TEST_NO_RECURSIVE_WATCH=1: Linux's fs.watch has it): the status says degraded with the reason,
// each directory of the tree is watched by itself, so a line appended below the top level lands by
// an event pass (not the full pass, 600 s away), and a directory that appears is watched from the
// full pass its event asks for. A real process.
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { decodeCursor, type AppendCursor } from "@lake/store";
import { BIN, claudeSessions, userLine } from "./helpers.js";

afterAll(cleanupTempDirs);

interface Status {
  state: string;
  reason?: string;
  full_passes: number;
  last_pass?: { kind: string };
  watching: { dir: string; recursive: boolean; active: boolean; directories?: number; problem?: string }[];
}

const status = (root: string): Status | undefined => {
  try {
    return JSON.parse(readFileSync(join(root, "watch.status"), "utf8")) as Status;
  } catch {
    return undefined;
  }
};

const offset = (root: string, sid: string): number => {
  const p = join(root, sid, "streams", "main", "transcript.cursor");
  try {
    return (decodeCursor(readFileSync(p, "utf8"), p) as AppendCursor).offset;
  } catch {
    return -1;
  }
};

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("watch without recursive file watching", { timeout: 180_000 }, () => {
  it("says degraded with the reason, watches each directory by itself, and lands what changes below the top level", async () => {
    const dir = tempDir("watch-fallback");
    const { projects, files, ids } = claudeSessions(join(dir, "vendor"), 3, 5, 6);
    const root = join(dir, "root");
    const proc = spawn(process.execPath, [BIN, "watch", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--interval", "600", "--json"], {
      env: { ...process.env, HOME: join(dir, "home"), LAKE_TEST_NO_RECURSIVE_WATCH: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exit = new Promise<number | null>((res) => proc.on("exit", (code) => res(code)));
    try {
      const first = await until("the first full pass", () => { const s = status(root); return s?.last_pass?.kind === "full" && s; }, 60_000);
      expect(first.state, stderr).toBe("degraded");
      expect(first.reason).toContain(`${projects}: recursive file watching is not available (ERR_FEATURE_UNAVAILABLE_ON_PLATFORM): watching 4 directories one by one`);
      // The vendor root (the hook spool is the other root watched).
      expect(first.watching.find((w) => w.dir === projects)).toMatchObject({ recursive: false, active: true, directories: 4 });
      for (let i = 0; i < 3; i++) expect(offset(root, ids[i]!)).toBe(statSync(files[i]!).size);

      // A line appended one level below the watched root: an event pass lands it (the full pass is 600 s away).
      appendFileSync(files[1]!, userLine(ids[1]!, 9001, "below the top level"));
      await until("the appended line", () => offset(root, ids[1]!) === statSync(files[1]!).size);
      // (the cursor is saved inside the pass, the status after it)
      const after = await until("the event pass in the status", () => { const s = status(root); return s?.last_pass?.kind === "events" && s; });
      expect(after.full_passes).toBe(1);

      // A new project directory: its event asks for a full pass, which finds the session and watches the directory.
      const sid = "0f0f0f0f-0000-4000-8000-000000000001";
      const project = join(projects, "-home-dev-new");
      mkdirSync(project);
      const file = join(project, `${sid}.jsonl`);
      writeFileSync(file, userLine(sid, 1, "a new session"));
      await until("the new session", () => offset(root, sid) === statSync(file).size);
      await until("the new directory watched", () => status(root)?.watching.find((w) => w.dir === projects)?.directories === 5);
      const passes = status(root)!.full_passes;
      appendFileSync(file, userLine(sid, 2, "and a second line"));
      await until("the second line", () => offset(root, sid) === statSync(file).size);
      expect(status(root)!.full_passes).toBe(passes);
      expect(status(root)!.state).toBe("degraded");
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await exit, stderr).toBe(0);
    expect(status(root)?.state).toBe("stopped");
  });
});
