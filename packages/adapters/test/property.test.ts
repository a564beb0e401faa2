// Property: a transcript fed twice (a resumed or copied session) does not change any usage total.
// fast-check picks a fixture, a point where the copy starts and a window size; 40 runs by default.
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { canonicalize, usageByDay, usageBySession, type CanonicalRecord } from "@lake/events";
import { getAdapter, type SourceLine, type SourceRef } from "../src/index.js";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { FIXTURES } from "./helpers.js";

afterAll(cleanupTempDirs);

const FILES: [string, string][] = [
  ["claude-code", "marot-spotter/subagent.jsonl"],
  ["claude-code", "marot-spotter/short.jsonl"],
  ["claude-code", "codemie-code/conversations/sessions/c3a574c5.jsonl"],
  ["codex", "madshn-localpush/raw/sessions/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"],
  ["codex", "ccusage-synthetic/replay-multisecond-modern.jsonl"],
  ["codex", "codemie-code/session-turns/turn-2.jsonl"],
];

function linesOf(text: string): SourceLine[] {
  const out: SourceLine[] = [];
  let offset = 0;
  text.split("\n").forEach((l, i) => {
    if (l) out.push({ bytes: Buffer.from(l), offset, line: i + 1 });
    offset += Buffer.byteLength(l) + 1;
  });
  return out;
}

function parseWindows(runtime: string, source: SourceRef, lines: SourceLine[], window: number): CanonicalRecord[] {
  const a = getAdapter(runtime);
  let state = a.initialState(source);
  const out: CanonicalRecord[] = [];
  for (let i = 0; i < lines.length; i += window) {
    out.push(...a.parseLines(source, lines.slice(i, i + window), state).map((r) => canonicalize(r)));
    state = JSON.parse(JSON.stringify(state)); // the collector persists state between windows
  }
  return out;
}

const totals = (recs: CanonicalRecord[]) => JSON.stringify([[...usageBySession(recs)].map(([k, v]) => [k, v.usage]), [...usageByDay(recs)].map(([k, v]) => [k, v.usage])]);

describe("usage is stable under re-feeding", () => {
  it("a transcript fed twice (a resumed copy appended, or a copied file) counts once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FILES), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 64 }), async ([runtime, rel], from, window) => {
        const path = `${FIXTURES}/${runtime}/${rel}`;
        const text = readFileSync(path, "utf8");
        const a = getAdapter(runtime);
        const source = await a.describe(path, `${FIXTURES}/${runtime}`);
        const lines = linesOf(text);
        const once = parseWindows(runtime, source, lines, window);
        // Resumed: the file goes on with a copy of its lines from `from` (the same lines re-appended).
        const k = Math.floor(from * lines.length);
        const tail = linesOf(text.split("\n").slice(k).join("\n")).map((l, i) => ({ ...l, offset: l.offset + Buffer.byteLength(text) + 1, line: lines.length + i + 1 }));
        const resumed = parseWindows(runtime, source, [...lines, ...tail], window);
        expect(totals(resumed)).toBe(totals(once));
        // Copied: the same file in another tree (sessions/ and archived_sessions/) yields identical
        // records apart from provenance, and both together count once.
        const copy = parseWindows(runtime, { ...source, rel: `archived_sessions/${rel}`, path: `/elsewhere/${rel}` }, lines, 7);
        expect(copy.map((r) => [r.record_id, r.content_hash])).toEqual(once.map((r) => [r.record_id, r.content_hash]));
        expect(totals([...once, ...copy])).toBe(totals(once));
      }),
      { numRuns: 40 },
    );
  });
});
