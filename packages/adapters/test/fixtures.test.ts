import { afterAll, describe, expect, it } from "vitest";
import { canonicalize, parseRecord } from "@lake/events";
import { parseFile } from "../src/index.js";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { FIXTURES, fixtureFiles } from "./helpers.js";

afterAll(cleanupTempDirs);

describe("every real fixture parses", () => {
  for (const f of fixtureFiles()) {
    it(f.path.slice(FIXTURES.length + 1), async () => {
      let n = 0;
      const ids = new Set<string>();
      for await (const raw of parseFile(f.path, { runtime: f.runtime, root: f.root })) {
        const rec = parseRecord(canonicalize(raw)); // schema-valid
        n++;
        expect(rec.runtime).toBe(f.runtime);
        expect(rec.source_path.startsWith("/")).toBe(false);
        expect(rec.record_id).toBeDefined();
        // Record ids are unique within one file.
        expect(ids.has(rec.record_id!)).toBe(false);
        ids.add(rec.record_id!);
        if (rec.kind === "unknown") expect(rec.raw).toBeTruthy();
        if (rec.usage) expect(rec.kind === "assistant" || rec.kind === "usage" || rec.kind === "tool_call").toBe(true);
        if (rec.tool_input !== undefined) expect(() => JSON.parse(rec.tool_input!)).not.toThrow();
        if (rec.attrs !== undefined) expect(typeof JSON.parse(rec.attrs)).toBe("object");
      }
      expect(n).toBeGreaterThan(0);
    });
  }
});
