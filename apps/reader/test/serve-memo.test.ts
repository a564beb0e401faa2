// The answers `serve` keeps between requests (src/internal/serve/memo.ts): one build per key, the
// most recently used kept, a failed build never kept.
import { describe, expect, it } from "vitest";
import { KeptAnswers } from "../src/internal/serve/memo.js";

describe("KeptAnswers", () => {
  it("builds a key once, also for calls made while it builds", async () => {
    const kept = new KeptAnswers();
    let builds = 0;
    const build = async () => {
      builds++;
      await new Promise((r) => setTimeout(r, 5));
      return { n: builds };
    };
    const [a, b] = await Promise.all([kept.get("k", build), kept.get("k", build)]);
    expect(a).toBe(b);
    expect(await kept.get("k", build)).toBe(a);
    expect(builds).toBe(1);
    expect(await kept.get("k2", build)).toEqual({ n: 2 });
  });

  it("does not keep a failed build: the next call builds again", async () => {
    const kept = new KeptAnswers();
    await expect(kept.get("k", () => Promise.reject(new Error("no such session")))).rejects.toThrow("no such session");
    expect(kept.size).toBe(0);
    expect(await kept.get("k", async () => 7)).toBe(7);
  });

  it("keeps the most recently used entries up to its limit", async () => {
    const kept = new KeptAnswers(2);
    await kept.get("a", async () => "a");
    await kept.get("b", async () => "b");
    await kept.get("a", async () => "a again"); // a used again: b is now the oldest
    await kept.get("c", async () => "c");
    expect(kept.size).toBe(2);
    expect(await kept.get("a", async () => "rebuilt")).toBe("a");
    expect(await kept.get("b", async () => "rebuilt")).toBe("rebuilt");
  });
});
