// fixture, fixtureFiles and copyFixture over the real test data: a name samples/ holds resolves to
// the samples' file, a directory holding one is refused by fixture, listed whole by fixtureFiles and
// copied whole (plain files) by copyFixture.
import { afterAll, describe, expect, it } from "vitest";
import { appendFileSync, lstatSync, readFileSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { copyFixture, fixture, fixtureFiles, SAMPLES } from "../src/index.js";

afterAll(cleanupTempDirs);

const HEAVY = "claude-code/marot-spotter/tool_heavy.jsonl";
const SAMPLE_HEAVY = join(SAMPLES, "claude", "projects", "-home-marco-projects-spotter", "tool_heavy.jsonl");

describe("@lake/testdata", () => {
  it("a name samples/ holds resolves to the samples' file; the others to this package's", () => {
    expect(fixture(HEAVY)).toBe(SAMPLE_HEAVY);
    expect(fixture("gemini/codemie-code/session-2025-12-01T21-45-5b959dae.json").startsWith(SAMPLES + sep)).toBe(true);
    const short = fixture("claude-code/marot-spotter/short.jsonl");
    expect(short.startsWith(SAMPLES)).toBe(false);
    expect(short.endsWith(join("testdata", "claude-code", "marot-spotter", "short.jsonl"))).toBe(true);
    expect(statSync(fixture("wal")).isDirectory()).toBe(true);
  });

  it("a misspelt name, a path leaving the package and a directory holding a samples/ file are refused, naming the path", () => {
    expect(() => fixture("claude-code/marot-spotter/nope.jsonl")).toThrow(/nope\.jsonl: no such fixture/);
    expect(() => fixture("../../samples")).toThrow(/outside the test data/);
    expect(() => fixture("claude-code")).toThrow(/claude-code: holds claude-code\/marot-spotter\/.* \(kept in samples\/\): read it with fixtureFiles or copyFixture/);
    expect(() => fixture("codex/codemie-code")).toThrow(/kept in samples/);
    expect(() => fixtureFiles("wal/vectors.json")).toThrow(/no such fixture directory/);
  });

  it("fixtureFiles lists a directory's whole tree, sorted, the samples' files where they are", () => {
    const files = fixtureFiles("claude-code/marot-spotter");
    expect(files.map((f) => f.rel)).toEqual([
      "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
      "258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl",
      "258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl",
      "short.jsonl",
      "subagent.jsonl",
      "tool_heavy.jsonl",
    ]);
    expect(files.filter((f) => f.path.startsWith(SAMPLES + sep)).map((f) => f.rel)).toEqual([
      "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
      "258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl",
      "258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl",
      "tool_heavy.jsonl",
    ]);
    const top = fixtureFiles("claude-code").map((f) => f.rel);
    expect(top).toContain("SOURCES.md");
    expect(top).toContain("marot-spotter/tool_heavy.jsonl");
    expect([...top].sort()).toEqual(top);
  });

  it("copyFixture copies the whole tree as plain files: appending to the copy leaves samples/ alone", () => {
    const dest = copyFixture("claude-code", join(tempDir("testdata-copy"), "projects"));
    const files = fixtureFiles("claude-code");
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const copy = join(dest, ...f.rel.split("/"));
      expect(lstatSync(copy).isFile(), f.rel).toBe(true);
      expect(readFileSync(copy).equals(readFileSync(f.path)), f.rel).toBe(true);
    }
    const before = statSync(SAMPLE_HEAVY).size;
    appendFileSync(join(dest, "marot-spotter", "tool_heavy.jsonl"), "{}\n");
    expect(statSync(join(dest, "marot-spotter", "tool_heavy.jsonl")).size).toBe(before + 3);
    expect(statSync(SAMPLE_HEAVY).size).toBe(before);
  });
});
