// Tables on a terminal: every report fits the width ($COLUMNS, else the TTY's), the compact table
// below it carries the same totals, colour only on a TTY (NO_COLOR off, FORCE_COLOR on), `sessions`
// names each session's project and last activity, and the README's screenshots are what the
// command prints on the Claude Code fixtures (so they cannot drift).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { main } from "../src/cli.js";
import { strWidth } from "../src/internal/format.js";
import { claudeRecords } from "./support/fixtures.js";
import { pushBronze } from "./support/fleet.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const ESC = "\x1b[";
const tmp = tempDir("reader-terminal");
const store = pathToFileURL(join(tmp, "fleet")).href;
const env = { LAKE_READER_CACHE: join(tmp, "cache") };

beforeAll(async () => {
  await pushBronze(join(tmp, "fleet"), await claudeRecords());
});

const widest = (s: string) => Math.max(...s.split("\n").map(strWidth));

/** Run with stdout a TTY of `columns` (as main sees process.stdout). */
async function onTty(argv: string[], columns: number, extra: NodeJS.ProcessEnv = {}): Promise<string> {
  let out = "";
  const code = await main(argv, { out: (s) => (out += s), err: () => {}, env: { PATH: process.env.PATH, TZ: "UTC", ...env, ...extra }, stdout: { isTTY: true, columns } });
  expect(code).toBe(0);
  return out;
}

describe("usage tables fit the terminal", () => {
  const reports = ["daily", "weekly", "blocks", "daily --breakdown", "blocks --by branch", "session --by project --breakdown"];

  it.each(reports)("usage %s: no line wider than 80 or 100 columns; wider terminals get the full table", async (args) => {
    const argv = ["usage", ...args.split(" "), "--timezone", "UTC", "--store", store];
    const full = await run(argv, env); // a pipe: no limit
    expect(full.code).toBe(0);
    expect(full.out).toContain("Cache write (1h)");
    for (const cols of [80, 100]) {
      const r = await run(argv, { ...env, COLUMNS: String(cols) });
      expect(r.code).toBe(0);
      expect(widest(r.out), `${cols} columns:\n${r.out}`).toBeLessThanOrEqual(cols);
      expect(r.out).not.toContain("Cache write (1h)");
      expect(r.out).toContain("compact: Total includes cache reads and writes");
    }
    const wide = await run(argv, { ...env, COLUMNS: String(widest(full.out)) });
    expect(wide.out).toBe(full.out);
  });

  it("the compact table's totals are the report's (JSON) totals", async () => {
    const argv = ["usage", "daily", "--timezone", "UTC", "--store", store];
    const { totals } = await runJson<{ totals: { input_tokens: number; output_tokens: number; total_tokens: number; cost_usd: number } }>([...argv, "--json"], env);
    const r = await run(argv, { ...env, COLUMNS: "80" });
    const row = r.out.split("\n").find((l) => l.startsWith("│ Total"))!;
    const cells = row.split("│").map((c) => c.trim()).filter(Boolean);
    expect(cells).toEqual(["Total", totals.input_tokens.toLocaleString("en-US"), totals.output_tokens.toLocaleString("en-US"), totals.total_tokens.toLocaleString("en-US"), `$${totals.cost_usd.toFixed(2)}`]);
  });

  it("--compact gives the compact table on any width", async () => {
    const r = await run(["usage", "monthly", "--compact", "--timezone", "UTC", "--store", store], env);
    expect(r.out).toContain("│ Month   │ Models");
    expect(r.out).not.toContain("Cached");
  });
});

describe("colour", () => {
  const argv = ["usage", "daily", "--timezone", "UTC", "--store", store];

  it("on a TTY: a coloured header and totals, and the table fits the TTY's width", async () => {
    const out = await onTty(argv, 90);
    expect(out).toContain(`${ESC}36mDate`);
    expect(out).toContain(`${ESC}33mTotal`);
    expect(widest(out)).toBeLessThanOrEqual(90);
  });

  it("NO_COLOR turns it off on a TTY, FORCE_COLOR=0 too; TERM=dumb too", async () => {
    for (const extra of [{ NO_COLOR: "1" }, { FORCE_COLOR: "0" }, { TERM: "dumb" }]) expect(await onTty(argv, 200, extra)).not.toContain(ESC);
  });

  it("never into a pipe, unless FORCE_COLOR (which wins over NO_COLOR)", async () => {
    expect((await run(argv, env)).out).not.toContain(ESC);
    expect((await run(argv, { ...env, FORCE_COLOR: "1" })).out).toContain(`${ESC}36m`);
    expect((await run(argv, { ...env, FORCE_COLOR: "1", NO_COLOR: "1" })).out).toContain(`${ESC}36m`);
  });

  it("never in JSON", async () => {
    expect((await run([...argv, "--json"], { ...env, FORCE_COLOR: "1" })).out).not.toContain(ESC);
  });
});

describe("sessions", () => {
  it("shows each session's project (repo, else working directory) and last activity, and fits 80 columns", async () => {
    const rows = await runJson<{ session_id: string; project: string | null; repo: string | null; cwd: string | null; last_ts: string | null }[]>(["sessions", "--json", "--store", store], env);
    expect(rows.length).toBeGreaterThan(5);
    for (const r of rows) expect(r.project).toBe(r.repo ?? r.cwd);
    const wide = await run(["sessions", "--store", store], env);
    expect(wide.out).toContain("│ Project");
    expect(wide.out).toContain("Last activity (UTC)");
    for (const r of rows.filter((x) => x.project && x.last_ts)) {
      const line = wide.out.split("\n").find((l) => l.startsWith(`│ ${r.session_id} `))!;
      expect(line).toContain(` ${r.project} `);
      expect(line).toContain(r.last_ts!.slice(0, 16).replace("T", " "));
    }
    const narrow = await run(["sessions", "--store", store], { ...env, COLUMNS: "80" });
    expect(widest(narrow.out)).toBeLessThanOrEqual(80);
    expect(narrow.out).toContain("│ Project");
    expect(narrow.out).toContain("Last activity (UTC)");
    // A long path is clipped at its start: its end says most.
    expect(narrow.out).toMatch(/│ …\S*code +│/);
  });
});

describe("the README's screenshots", () => {
  const shots = [...README.matchAll(/<!-- screenshot: COLUMNS=(\d+) -->\n```\n([\s\S]*?)```/g)].map((m) => ({ columns: m[1]!, text: m[2]! }));

  it("there are a narrow and a wide one", () => {
    expect(shots.map((s) => s.columns)).toEqual(["80", "140"]);
  });

  it.each(shots)("COLUMNS=$columns is what usage daily prints at that width", async ({ columns, text }) => {
    const r = await run(["usage", "daily", "--since", "2025-12-10", "--until", "2026-02-11", "--timezone", "UTC", "--store", store], { ...env, COLUMNS: columns });
    expect(r.code).toBe(0);
    expect(r.out).toBe(text);
    expect(widest(text)).toBeLessThanOrEqual(Number(columns));
  });
});
