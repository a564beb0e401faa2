// The answers `serve` keeps between requests (src/internal/serve/memo.ts): one build per key, the
// most recently used kept, a failed build never kept; and its fleet state (state.ts): one shared
// resolution for calls that arrive together, answers kept for one fleet fingerprint.
import { describe, expect, it } from "vitest";
import type { FleetFiles } from "../src/internal/fleet.js";
import { KeptAnswers } from "../src/internal/serve/memo.js";
import { FleetState } from "../src/internal/serve/state.js";

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

describe("FleetState", () => {
  /** A resolution that finishes when told to, with the fleet's fingerprint. */
  const pending = () => {
    const runs: { fingerprint: string; finish: () => void }[] = [];
    const resolve = (fingerprint: string) => () =>
      new Promise<FleetFiles>((done) => runs.push({ fingerprint, finish: () => done({ fingerprint } as FleetFiles) }));
    return { runs, resolve };
  };
  const tick = () => new Promise((r) => setTimeout(r, 0));

  it("calls arriving while a resolution runs share the next one, started after they arrived", async () => {
    const state = new FleetState();
    const { runs, resolve } = pending();
    const first = state.files(resolve("a"));
    const later = [state.files(resolve("b")), state.files(resolve("c"))];
    await tick();
    expect(runs.map((r) => r.fingerprint)).toEqual(["a"]);
    runs[0]!.finish();
    expect((await first).fingerprint).toBe("a");
    await tick();
    // One more resolution, not one per waiting call, and it started after they did.
    expect(runs.map((r) => r.fingerprint)).toEqual(["a", "b"]);
    runs[1]!.finish();
    expect((await Promise.all(later)).map((f) => f.fingerprint)).toEqual(["b", "b"]);
    await state.close();
  });

  it("keeps an answer for one fleet state: built once while it is current, anew after a change", async () => {
    const state = new FleetState();
    let builds = 0;
    const build = async () => ++builds;
    const a = await state.files(async () => ({ fingerprint: "a" }) as FleetFiles);
    expect(await state.keep(a, "k", build)).toBe(1);
    expect(await state.keep(a, "k", build)).toBe(1);
    const b = await state.files(async () => ({ fingerprint: "b" }) as FleetFiles);
    expect(await state.keep(b, "k", build)).toBe(2);
    // An answer asked for over the older resolution is built for it, and does not replace the newer state.
    expect(await state.keep(a, "k", build)).toBe(3);
    expect(await state.keep(b, "k", build)).toBe(2);
    await state.close();
  });
});
