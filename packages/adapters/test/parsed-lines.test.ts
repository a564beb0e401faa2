// A caller that decoded and parsed a line already (the store does, to tell JSON from torn lines)
// hands its text and value over with the bytes, and the adapter uses them instead of parsing again.
// The records are the same either way, for every line of every real line-based fixture, with LF
// and with CRLF line ends.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { getAdapter, type SourceLine } from "../src/index.js";
import { fixtureFiles } from "./helpers.js";

afterAll(cleanupTempDirs);

/** The lines of `text` as the store hands them over: bytes, offset, number; with text and value when `parsed`. */
function lines(text: string, parsed: boolean): SourceLine[] {
  const out: SourceLine[] = [];
  let offset = 0;
  text.split("\n").forEach((t, i, all) => {
    const bytes = Buffer.from(t);
    if (t !== "" || i < all.length - 1) {
      let value: unknown;
      try {
        value = JSON.parse(t);
      } catch {
        value = undefined;
      }
      out.push(parsed ? { bytes, offset, line: i + 1, text: t, value } : { bytes, offset, line: i + 1 });
    }
    offset += bytes.length + 1;
  });
  return out.filter((l) => l.bytes.length > 0);
}

describe("lines with their text and value", () => {
  const files = fixtureFiles().filter((f) => f.path.endsWith(".jsonl") && (f.runtime === "claude-code" || f.runtime === "codex"));
  it("cover real Claude Code and Codex files", () => expect(files.length).toBeGreaterThanOrEqual(4));
  for (const f of files) {
    it(`${f.runtime} ${f.path.slice(f.root.length + 1)}: the same records as from bytes alone (LF and CRLF)`, async () => {
      const adapter = getAdapter(f.runtime);
      const src = await adapter.describe(f.path, f.root);
      const text = readFileSync(f.path, "utf8");
      for (const t of [text, text.replace(/\n/g, "\r\n")]) {
        const fromBytes = adapter.parseLines(src, lines(t, false), adapter.initialState(src));
        const given = adapter.parseLines(src, lines(t, true), adapter.initialState(src));
        expect(fromBytes.length).toBeGreaterThan(0);
        expect(given).toEqual(fromBytes);
      }
    });
  }
  it("the given value is the one used: the bytes are not parsed again", async () => {
    const f = files.find((x) => x.runtime === "claude-code")!;
    const adapter = getAdapter("claude-code");
    const src = await adapter.describe(f.path, f.root);
    const line = JSON.stringify({ type: "user", uuid: "u-given", sessionId: src.session_id, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: "given" } });
    const [r] = adapter.parseLines(src, [{ bytes: Buffer.from("{torn"), offset: 0, line: 1, text: line, value: JSON.parse(line) }], {});
    expect(r).toMatchObject({ kind: "user", record_id: "u-given", text: "given" });
  });
});
