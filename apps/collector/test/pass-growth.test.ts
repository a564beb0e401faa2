// A watcher's pass over a session that keeps growing costs what is new, not the session's history:
// the files it opens, the directory entries it lists and the bytes it reads under the storage root
// are the same after 10 appends and after 10,000 lines landed in 500 passes (500 landed files, 500
// rounds). Counted through node:fs (test/support/fs-count.ts), not timed. The source itself is read
// from its cursor, plus the tail window before it (1 MiB at most, storage-root spec step 4).
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { readIndex } from "@lake/store";
import { readChain } from "@lake/chain";
import { collect, type Discovered, type PassCache } from "../src/internal/collect.js";
import { userLine } from "./helpers.js";
import { countFs, type FsCounts } from "./support/fs-count.js";

afterAll(cleanupTempDirs);

const SID = "5e55a1c0-0000-4000-8000-00000000f00d";
const TAIL_WINDOW = 1024 * 1024;

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

describe("a watcher's pass over a growing session", { timeout: 300_000 }, () => {
  it("opens, lists and reads under the root the same at history 10 and at history 10,000 lines / 500 rounds", async () => {
    const dir = tempDir("pass-growth", { memory: true });
    const projects = join(dir, "vendor", "projects");
    mkdirSync(join(projects, "-home-dev-p"), { recursive: true });
    const file = join(projects, "-home-dev-p", `${SID}.jsonl`);
    const root = join(dir, "root");
    let n = 0;
    const grow = (lines: number) => {
      let s = "";
      for (let i = 0; i < lines; i++, n++) s += userLine(SID, n, `line ${n} ${"x".repeat(200)}`);
      appendFileSync(file, s);
    };
    writeFileSync(file, "");
    grow(1);
    const sources = { roots: new Map([["claude-code", [projects]]]), only: true };
    const cache: PassCache = {};
    let discovered: Discovered | undefined;
    const quiet = () => undefined;
    const first = await collect({ root, sources, cache, logger: quiet, onDiscovered: (d) => (discovered = d) });
    expect(first.landed_files).toBe(1);
    // What the watch loop runs after a file event names the session.
    const pass = () => collect({ root, sources, cache, logger: quiet, only: { discovered: discovered!, sessions: new Set([SID]) } });
    const measured = async (): Promise<{ root: FsCounts; source: FsCounts }> => {
      grow(20);
      const r = countFs(root);
      const s = countFs(file);
      const out = await pass();
      const counts = { source: s.stop(), root: r.stop() };
      expect(out).toMatchObject({ landed_files: 1, records: 20, rounds: 1, problems: [] });
      return counts;
    };
    for (let i = 0; i < 9; i++) {
      grow(1);
      await pass();
    }
    const early = [await measured(), await measured(), await measured()];
    // History: 10,000 lines in 500 passes (a landed file and a round each).
    while (n < 10_000) {
      grow(20);
      const r = await pass();
      expect(r.landed_files).toBe(1);
    }
    const late = [await measured(), await measured(), await measured()];
    const idx = readIndex(root, SID);
    expect(idx.entries.length).toBe(n);
    expect(idx.files.length).toBeGreaterThan(500);
    expect((await readChain(root, SID)).rounds.length).toBe(idx.files.length);

    type Pass = { root: FsCounts; source: FsCounts };
    const opens = (c: Pass[]) => Math.max(...c.map((x) => x.root.opens.length));
    const listed = (c: Pass[]) => Math.max(...c.map((x) => x.root.listed));
    const bytes = (c: Pass[]) => Math.max(...c.map((x) => sum(x.root.bytes)));
    // Nothing of the history is opened, listed or read again: the late passes do what the early ones did.
    expect(opens(late), JSON.stringify(late[0]!.root.opens)).toBeLessThanOrEqual(opens(early));
    expect(listed(late)).toBeLessThanOrEqual(listed(early));
    // Bytes under the root: cursors, states, pass.state (one mark per session): the same within a few hundred bytes.
    expect(bytes(late)).toBeLessThanOrEqual(bytes(early) + 512);
    // The source: the new lines, and the tail window before the cursor (capped at 1 MiB however long the file).
    for (const c of late) expect(sum(c.source.bytes)).toBeLessThanOrEqual(TAIL_WINDOW + 20 * 600);
  });
});
