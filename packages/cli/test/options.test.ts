import { describe, expect, it } from "vitest";
import { choice, choices, count, flag, isCliError, parseOptions, parseSeconds, seconds, text, texts } from "../src/index.js";

const TABLE = {
  idle: seconds("idle time", { default: 60 }),
  rows: count("N", "rows", { min: 1, max: 10 }),
  mode: choice("M", ["fast", "slow"], "mode", { default: "fast" }),
  runtime: choices("RT", ["claude-code", "codex"], "runtimes"),
  exclude: texts("GLOB", "excluded"),
  name: text("NAME", "a name"),
  json: flag("json", { short: "j" }),
} as const;

function usageMessage(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(isCliError(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error("expected a usage error");
}

describe("parseOptions", () => {
  it("reads long, inline, short and repeated options, with defaults for the absent ones", () => {
    const r = parseOptions(TABLE, ["--idle=15m", "--rows", "3", "-j", "--runtime", "codex", "--runtime=claude-code", "pos", "--", "--not-an-option"], { names: "[X…]", min: 0, max: 5 });
    expect(r.values).toEqual({ idle: 900, rows: 3, mode: "fast", runtime: ["codex", "claude-code"], exclude: [], name: undefined, json: true });
    expect(r.positionals).toEqual(["pos", "--not-an-option"]);
    expect(r.help).toBe(false);
  });

  it("takes a value starting with one dash, refuses one starting with two (a forgotten value)", () => {
    expect(parseOptions(TABLE, ["--exclude", "-tmp-x/**"], undefined).values.exclude).toEqual(["-tmp-x/**"]);
    expect(usageMessage(() => parseOptions(TABLE, ["--name", "--json"], undefined))).toBe("--name needs a value (NAME)");
    expect(usageMessage(() => parseOptions(TABLE, ["--name"], undefined))).toBe("--name needs a value (NAME)");
  });

  it("names the option and the reason of every bad command line", () => {
    expect(usageMessage(() => parseOptions(TABLE, ["--bogus"], undefined))).toBe("unknown option --bogus");
    expect(usageMessage(() => parseOptions(TABLE, ["-x"], undefined))).toBe("unknown option -x");
    expect(usageMessage(() => parseOptions(TABLE, ["--json=yes"], undefined))).toBe("--json takes no value");
    expect(usageMessage(() => parseOptions(TABLE, ["--mode", "medium"], undefined))).toBe('--mode "medium": expected one of fast, slow');
    expect(usageMessage(() => parseOptions(TABLE, ["--runtime", "cursor"], undefined))).toBe('--runtime "cursor": expected one of claude-code, codex');
    expect(usageMessage(() => parseOptions(TABLE, ["--rows", "0"], undefined))).toBe('--rows "0": must be 1-10');
    expect(usageMessage(() => parseOptions(TABLE, ["--rows", "2.5"], undefined))).toBe('--rows "2.5": expected a whole number 1-10');
    expect(usageMessage(() => parseOptions(TABLE, ["--idle", "-5"], undefined))).toMatch(/^--idle "-5": expected a duration/);
    expect(usageMessage(() => parseOptions(TABLE, ["--name", "a", "--name", "b"], undefined))).toBe("--name given twice");
    expect(usageMessage(() => parseOptions(TABLE, ["extra"], undefined))).toBe('unexpected argument "extra"');
    expect(usageMessage(() => parseOptions(TABLE, [], { names: "SESSION", min: 1, max: 1 }))).toBe("expected SESSION");
  });

  it("a required option is checked, unless help is asked for", () => {
    const t = { ttl: seconds("ttl", { required: true }) } as const;
    expect(usageMessage(() => parseOptions(t, [], undefined))).toBe("--ttl SECONDS is required");
    expect(parseOptions(t, ["--bogus", "-h"], undefined).help).toBe(true);
    expect(usageMessage(() => parseOptions(t, ["--", "-h"], { names: "X", min: 0, max: 1 }))).toBe("--ttl SECONDS is required");
    expect(parseOptions(t, ["--ttl", "1", "--", "-h"], { names: "X", min: 0, max: 1 })).toEqual({ values: { ttl: 1 }, positionals: ["-h"], help: false });
  });
});

describe("parseSeconds", () => {
  it("takes seconds and the units ms, s, m, h, d", () => {
    expect([parseSeconds("90"), parseSeconds("1.5"), parseSeconds("500ms"), parseSeconds("90s"), parseSeconds("15m"), parseSeconds("2h"), parseSeconds("1d")]).toEqual([90, 1.5, 0.5, 90, 900, 7200, 86400]);
    for (const bad of ["", "-1", "1w", "1e3", "m", "1 h x"]) expect(() => parseSeconds(bad), bad).toThrow();
    expect(() => parseSeconds("0", 1)).toThrow("must be at least 1 s");
  });
});
