// The README's "who uses what" table against the apps' sources: every value an app imports from
// @lake/segments (or @lake/segments/hash) is listed on its row, and nothing else is.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const README = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");

/** The values a source file imports from @lake/segments: static imports (type-only ones left out), `await import(…)` and `import(…).then(({ … }) =>`. */
function segmentImports(source: string): string[] {
  const names: string[] = [];
  const list = (body: string) =>
    body
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n && !n.startsWith("type "))
      .map((n) => n.split(/\s+as\s+/)[0]!.trim());
  for (const m of source.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s*from\s*"@lake\/segments(?:\/hash)?"/g)) if (!m[1]) names.push(...list(m[2]!));
  for (const m of source.matchAll(/const\s*\{([^}]*)\}\s*=\s*await\s+import\("@lake\/segments(?:\/hash)?"\)/g)) names.push(...list(m[1]!));
  for (const m of source.matchAll(/import\("@lake\/segments(?:\/hash)?"\)\.then\(\(\{([^}]*)\}\)/g)) names.push(...list(m[1]!));
  for (const m of source.matchAll(/\(await\s+import\("@lake\/segments(?:\/hash)?"\)\)\.(\w+)/g)) names.push(m[1]!);
  return names;
}

function appSources(dir: string): string[] {
  return (readdirSync(join(dir, "src"), { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).map((f) => readFileSync(join(dir, "src", f), "utf8"));
}

describe("README", () => {
  it("reads every form of import the apps use", () => {
    expect(
      segmentImports(`import { readSegment, type FleetRow } from "@lake/segments";
import type { SegmentInfo } from "@lake/segments";
import { CheckedFiles as C, type ContentHashCheck } from "@lake/segments/hash";
const { SegmentWriter } = await import("@lake/segments");
const n = (await import("@lake/segments")).sqlString;
const w = import("@lake/segments").then(({ readUsageRecords }) => readUsageRecords);`),
    ).toEqual(["readSegment", "CheckedFiles", "SegmentWriter", "readUsageRecords", "sqlString"]);
  });

  it("lists, per app, exactly the values it imports from @lake/segments", () => {
    const rows = README.split("\n").filter((l) => /^\| lake-\w+ \|/.test(l));
    const table = new Map(rows.map((l) => l.split("|").map((c) => c.trim())).map((c) => [c[1]!, [...c[2]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!).sort()]));
    const apps = readdirSync(join(REPO, "apps")).map((d) => join(REPO, "apps", d));
    const used = new Map<string, string[]>();
    for (const dir of apps) {
      const name = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string }).name;
      const names = [...new Set(appSources(dir).flatMap(segmentImports))].sort();
      if (names.length) used.set(name, names);
    }
    expect(used.size).toBe(3);
    expect(table).toEqual(used);
  });
});
