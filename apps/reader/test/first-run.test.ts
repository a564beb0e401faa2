// What a newcomer meets first in show and labels, on a root the built lake-collector collected from
// the bundled samples plus a second copy of tool_heavy (its id shares a prefix with the first, and
// one of its records holds a private key, so it is quarantined): thinking blocks and withheld records
// as one-line placeholders, an ambiguous prefix listing its matches, labels resolving prefixes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "@lake/cli";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { collectedSamples, collector, SAMPLE_PROJECTS } from "./support/collected.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

const SID = "258c7280-ae70-4798-800f-63464d01a85d";
const TOOL = "d6e0bada-1959-4eec-a9d2-0bfade768d8f";
const TWIN = "d6e0bada-0000-4000-8000-000000000001";

type Item = { kind: string; text?: string; thinking?: true; quarantined?: { rules: string[] }; tool?: { child?: { items: Item[] } } };
const flat = (items: readonly Item[]): Item[] => items.flatMap((i) => [i, ...flat(i.tool?.child?.items ?? [])]);

/** The thinking blocks of the sample transcript, as Claude Code wrote them (one per line). */
function sampleThinking(): string[] {
  const file = join(SAMPLE_PROJECTS, "-home-marco-projects-spotter", `${SID}.jsonl`);
  const out: string[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.includes('"thinking"')) continue;
    const v = JSON.parse(line) as { isSidechain?: boolean; message?: { content?: { type: string; thinking?: string }[] } };
    for (const c of v.message?.content ?? []) if (c.type === "thinking" && c.thinking) out.push(c.thinking);
  }
  return out;
}

describe("show and labels on a first run", () => {
  const samples = collectedSamples("reader-first-run");
  const { root, store, env, args, projects } = samples;

  beforeAll(() => {
    // The twin: tool_heavy under another id sharing its first 8 characters; its first user line holds a key.
    const lines = readFileSync(join(projects, "-home-marco-projects-spotter", "tool_heavy.jsonl"), "utf8").trimEnd().split("\n");
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${Array.from({ length: 12 }, () => randomBytes(48).toString("base64")).join("\n")}\n-----END RSA PRIVATE KEY-----`;
    let planted = false;
    const twin = lines.map((l) => {
      const v = JSON.parse(l.replaceAll(TOOL, TWIN)) as { type?: string; message?: { content?: unknown } };
      if (!planted && v.type === "user" && typeof v.message?.content === "string") {
        v.message.content = `here is the deploy key:\n${pem}`;
        planted = true;
      }
      return JSON.stringify(v);
    });
    expect(planted).toBe(true);
    mkdirSync(join(projects, "-tmp-twin"), { recursive: true });
    writeFileSync(join(projects, "-tmp-twin", `${TWIN}.jsonl`), twin.join("\n") + "\n");
    samples.collectAndPush();
  }, 180_000);

  for (const from of ["chain", "events"] as const) {
    it(`thinking blocks are one line each, "thinking: N chars, collapsed"; --full expands them (${from})`, async () => {
      const want = sampleThinking();
      expect(want.length).toBeGreaterThan(5);
      const text = await run(["show", SID, "--from", from, ...args], env);
      expect(text.code, text.err).toBe(0);
      const collapsed = text.out.split("\n").filter((l) => / thinking: \d+ chars, collapsed$/.test(l));
      const lengths = (ls: string[]) => ls.map((l) => Number(/ thinking: (\d+) chars/.exec(l)![1])).sort((a, b) => a - b);
      const conv = await runJson<{ items: Item[]; other_streams: { items: Item[] }[] }>(["show", SID, "--from", from, "--json", ...args], env);
      const thinking = [...flat(conv.items), ...conv.other_streams.flatMap((o) => flat(o.items))].filter((i) => i.thinking);
      expect(collapsed.length).toBe(thinking.length);
      expect(lengths(collapsed)).toEqual(thinking.map((t) => t.text!.length).sort((a, b) => a - b));
      // Every thinking block of the main transcript is among them, with its whole text in the JSON.
      for (const t of want) expect(thinking.some((i) => i.text === t)).toBe(true);
      // No empty assistant line (whitespace-only text blocks show nothing).
      expect(text.out.split("\n").filter((l) => /^\s*\d\d:\d\d:\d\d assistant( \([^)]*\))?: *$/.test(l))).toEqual([]);
      const full = await run(["show", SID, "--from", from, "--full", ...args], env);
      expect(full.out).not.toMatch(/chars, collapsed/);
      expect(full.out).toContain(`thinking: ${want[0]!.replace(/\s+/g, " ").trim().slice(0, 40)}`);
    });

    it(`a quarantined record shows as "record withheld: private-key" (${from})`, async () => {
      const text = await run(["show", TWIN, "--from", from, ...args], env);
      expect(text.code, text.err).toBe(0);
      expect(text.out.split("\n").filter((l) => l.includes("record withheld:"))).toEqual([expect.stringMatching(/ user: record withheld: private-key$/)]);
      expect(text.out).not.toContain("PRIVATE KEY");
      const conv = await runJson<{ items: Item[] }>(["show", TWIN, "--from", from, "--json", ...args], env);
      expect(flat(conv.items).filter((i) => i.quarantined)).toEqual([expect.objectContaining({ kind: "user", quarantined: { rules: ["private-key"] } })]);
    });

    it(`an ambiguous prefix lists every match with runtime, start and run time, no inner folder (${from})`, async () => {
      const r = await run(["show", "d6e0bada", "--from", from, ...args], env);
      expect(r.code).toBe(2);
      expect(r.err).not.toContain("_conversations");
      expect(r.err.trim().split("\n")).toHaveLength(1);
      for (const id of [TOOL, TWIN]) expect(r.err).toMatch(new RegExp(`${id} \\(claude-code, started \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ, ran \\d`));
      expect(r.err).toContain('"d6e0bada" matches 2 sessions in the ' + (from === "chain" ? `local root ${root}` : `fleet store ${store}`));
    });
  }

  it("labels add resolves a prefix like show, refuses an unknown id unless --force; status does not count labels/", async () => {
    const before = JSON.parse(collector(["status", "--root", root, "--json"])) as { sessions: number };
    const added = await runJson<{ session_id: string; runtime: string }>(["labels", "add", "--session", SID.slice(0, 8), "--aspect", "outcome", "--value", "ok", "--json", ...args], env);
    expect(added).toMatchObject({ session_id: SID, runtime: "claude-code" });
    const unknown = await run(["labels", "add", "--session", "ffffffff", "--aspect", "outcome", "--value", "ok", ...args], env);
    expect(unknown.code).toBe(EXIT.notFound);
    expect(unknown.err).toMatch(/no session "ffffffff"/);
    const ambiguous = await run(["labels", "add", "--session", "d6e0bada", "--aspect", "outcome", "--value", "ok", ...args], env);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.err).toContain(TWIN);
    const forced = await runJson<{ session_id: string }>(["labels", "add", "--session", "ffffffff", "--aspect", "outcome", "--value", "ok", "--force", "--json", ...args], env);
    expect(forced.session_id).toBe("ffffffff");
    const listed = await runJson<{ session_id: string }[]>(["labels", "list", "--json", ...args], env);
    expect(listed.map((l) => l.session_id)).toEqual([SID, "ffffffff"]);
    const after = JSON.parse(collector(["status", "--root", root, "--json"])) as { sessions: number };
    expect(after.sessions).toBe(before.sessions);
  });
});
