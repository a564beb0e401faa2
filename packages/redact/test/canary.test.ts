// Canary: a planted secret of every rule, placed in every string field of real record shapes
// (as the whole value, inside prose, inside a nested JSON document held in a string, and as an
// object key), never appears in the output bytes — masked or quarantined.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fixture } from "@lake/testdata";
import { createRedactor, defaultRules, memoryKey, type JsonValue } from "../src/index.js";
import { UNPLANTED, plantFor } from "./corpus.js";
import { VENDOR_FORMATS } from "../src/internal/vendors.js";

// Vendor formats share one code path (a token between boundaries): they are planted in the first
// three record shapes with quarantine off; the other rules everywhere, in both modes.
const VENDOR_IDS = new Set(VENDOR_FORMATS.map((v) => v.id));

const lines = readFileSync(fixture("claude-code/marot-spotter/tool_heavy.jsonl"), "utf8").split("\n").filter(Boolean);
// A few distinct record shapes: the first record of each type.
const shapes = new Map<string, JsonValue>();
for (const l of lines) {
  const v = JSON.parse(l) as { type?: string; message?: { content?: unknown } };
  const k = `${v.type}/${Array.isArray(v.message?.content) ? (v.message.content as { type?: string }[])[0]?.type : typeof v.message?.content}`;
  if (!shapes.has(k)) shapes.set(k, v as JsonValue);
}

type Path = (string | number)[];
function stringPaths(v: JsonValue, path: Path = [], out: Path[] = []): Path[] {
  if (typeof v === "string") out.push(path);
  else if (Array.isArray(v)) v.forEach((x, i) => stringPaths(x, [...path, i], out));
  else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) stringPaths(x, [...path, k], out);
  return out;
}
function setAt(v: JsonValue, path: Path, value: JsonValue): JsonValue {
  const copy = structuredClone(v);
  let o = copy as Record<string | number, JsonValue>;
  for (const p of path.slice(0, -1)) o = o[p] as Record<string | number, JsonValue>;
  o[path.at(-1)!] = value;
  return copy;
}

/** Every piece of the secret that must not survive: the whole, its escaped forms, and 16-char windows of its random part. */
function needles(secret: string): string[] {
  const out = new Set([secret, JSON.stringify(secret).slice(1, -1), JSON.stringify(JSON.stringify(secret)).slice(1, -1)]);
  const core = secret.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
  for (let i = 0; i + 16 <= core.length; i += 8) out.add(core.slice(i, i + 16));
  return [...out];
}

describe("canary", () => {
  for (const quarantineRules of [undefined, [] as string[]]) {
    const red = createRedactor({ key: memoryKey(), ...(quarantineRules ? { quarantineRules } : {}) });
    it(`no planted secret reaches the output (quarantine ${quarantineRules ? "off" : "default"})`, () => {
      let cases = 0;
      const leaks: string[] = [];
      defaultRules.forEach((rule, ri) => {
        if (UNPLANTED.includes(rule.id)) return;
        const vendor = VENDOR_IDS.has(rule.id);
        if (vendor && quarantineRules === undefined) return;
        for (const [shape, rec] of vendor ? [...shapes].slice(0, 3) : shapes) {
          stringPaths(rec).forEach((path, pi) => {
            const { form, secret } = plantFor(rule.id, 1000 + ri * 97 + pi);
            const placements: [string, JsonValue][] = [
              ["value", setAt(rec, path, form)],
              ["prose", setAt(rec, path, `Output of the last step:\n${form}\nDone.`)],
              ["nested-json", setAt(rec, path, JSON.stringify({ result: { stdout: form, args: ["--env", form] } }))],
              ["nested-json-2", setAt(rec, path, JSON.stringify(JSON.stringify({ stdout: form })))],
              ["key", setAt(rec, path, { [form]: "v", inner: [{ [`x ${form}`]: 1 }] })],
            ];
            for (const [where, planted] of placements) {
              cases++;
              const out = JSON.stringify(red.redactRecord(planted));
              for (const n of needles(secret)) {
                if (out.includes(n)) leaks.push(`${rule.id} ${shape} ${path.join(".")} ${where}`);
              }
            }
          });
        }
      });
      expect(leaks).toEqual([]);
      expect(cases).toBeGreaterThan((defaultRules.length - VENDOR_IDS.size - UNPLANTED.length) * 20);
    });
  }
});
