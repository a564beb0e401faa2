// Prices: lake-reader's lookup and arithmetic against genai-prices' own calcPrice, the fleet's
// models all priced, three prices pinned by hand, and the cost rules end to end through the CLI
// (tiers, 1-hour cache writes, recorded costs under each cost mode, unknown models, --pricing FILE,
// usage rollups pricing like the responses they sum).
import { execFileSync } from "node:child_process";
import { EXIT } from "@lake/cli";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { calcPrice } from "@pydantic/genai-prices";
import { canonicalize, countUsage, type CanonicalRecord, type RawRecord } from "@lake/events";
import { parseFile } from "@lake/adapters";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { copyFixture } from "@lake/testdata";
import { DATASET, costAt, loadPricing, modelCandidates, priceAt, type Pricing } from "../src/index.js";
import { claudeRecords, filesUnder, sampleRecords } from "./support/fixtures.js";
import { pushBronze } from "./support/fleet.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

const MAINT = fileURLToPath(new URL("../../maint/bin/lake-maint.js", import.meta.url));
type Row = Record<string, unknown>;

/** The real Codex and Gemini CLI fixtures (@lake/testdata codex/ and gemini/, copied whole), every file through its adapter (as the adapters' tests read them). */
async function codexGeminiRecords(): Promise<CanonicalRecord[]> {
  const out: CanonicalRecord[] = [];
  for (const runtime of ["codex", "gemini"]) {
    const root = copyFixture(runtime, tempDir(`reader-pricing-${runtime}`));
    for (const f of filesUnder(root).filter((f) => !f.endsWith(".md"))) for await (const r of parseFile(f, { runtime, root })) out.push(canonicalize(r));
  }
  return out;
}

let pricing: Pricing;
beforeAll(async () => {
  pricing = await loadPricing({ cache: tempDir("reader-pricing-cache") });
});

describe("the price dataset", () => {
  it("is the pinned @pydantic/genai-prices version, and its date is stated", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { dependencies: Record<string, string> };
    expect(pkg.dependencies["@pydantic/genai-prices"]).toBe(DATASET.version);
    expect(pricing.dataset).toEqual(DATASET);
    expect(DATASET.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("is read from the reader cache after the first run, with the same prices", async () => {
    const cache = tempDir("reader-pricing-cache2");
    const a = await loadPricing({ cache });
    const file = join(cache, "pricing", `genai-prices-${DATASET.version}.json`);
    expect(JSON.parse(readFileSync(file, "utf8")).length).toBeGreaterThan(10);
    const b = await loadPricing({ cache });
    for (const m of ["claude-opus-4-6", "gpt-5.5", "gemini-2.5-pro"]) expect(b.model(m)).toEqual(a.model(m));
    // A cache (replaced atomically, not fsynced): a torn one, as a power cut may leave, is rebuilt.
    writeFileSync(file, "[{");
    const c = await loadPricing({ cache });
    expect(c.model("gpt-5.5")).toEqual(a.model("gpt-5.5"));
    expect(JSON.parse(readFileSync(file, "utf8")).length).toBeGreaterThan(10);
    expect(readdirSync(join(cache, "pricing"))).toEqual([`genai-prices-${DATASET.version}.json`]);
  });

  it("pins three list prices by hand from the providers' pages, so a dataset update that changes them is noticed", () => {
    // USD per million tokens, the providers' published list prices. Anthropic's page was re-read on
    // 2026-12-01; the OpenAI and Google figures are their long-standing list prices for these models,
    // not re-read that day:
    //  - docs.anthropic.com/en/docs/about-claude/pricing — Claude Sonnet 4.5: input $3, 5-minute cache
    //    write $3.75, 1-hour cache write $6, cache read $0.30, output $15; prompts > 200K: input $6, output $22.50.
    //  - openai.com/api/pricing — GPT-5: input $1.25, cached input $0.125, output $10.
    //  - ai.google.dev/gemini-api/docs/pricing — Gemini 2.5 Pro: input $1.25 / output $10 for prompts
    //    ≤ 200K, $2.50 / $15 above.
    const at = Date.parse("2026-06-01T00:00:00Z");
    const M = 1_000_000;
    const sonnet = priceAt(pricing.model("claude-sonnet-4-5-20250929")!.prices, at);
    const base = { prompt: 0 }; // a prompt under every tier
    expect(costAt({ input_tokens: M }, sonnet, base)).toBeCloseTo(3, 9);
    expect(costAt({ cache_write_tokens: M }, sonnet, { prompt: 0 })).toBeCloseTo(3.75, 9);
    expect(costAt({ cache_write_tokens: M, cache_write_1h_tokens: M }, sonnet, { prompt: 0 })).toBeCloseTo(6, 9);
    expect(costAt({ cached_input_tokens: M }, sonnet, { prompt: 0 })).toBeCloseTo(0.3, 9);
    expect(costAt({ output_tokens: M }, sonnet, base)).toBeCloseTo(15, 9);
    // A 250K prompt: the whole response at the > 200K prices.
    expect(costAt({ input_tokens: 250_000, output_tokens: M }, sonnet)).toBeCloseTo(0.25 * 6 + 22.5, 9);
    const gpt5 = priceAt(pricing.model("gpt-5")!.prices, at);
    expect(costAt({ input_tokens: M, cached_input_tokens: M, output_tokens: M }, gpt5, { prompt: 0 })).toBeCloseTo(1.25 + 0.125 + 10, 9);
    const gemini = priceAt(pricing.model("gemini-2.5-pro")!.prices, at);
    expect(costAt({ input_tokens: 100_000, output_tokens: 100_000 }, gemini)).toBeCloseTo(0.1 * 1.25 + 0.1 * 10, 9);
    expect(costAt({ input_tokens: 300_000, output_tokens: 100_000 }, gemini)).toBeCloseTo(0.3 * 2.5 + 0.1 * 15, 9);
  });
});

describe("every model the fleet's real transcripts name is priced", () => {
  it("the Codex and Gemini CLI fixtures and samples/", async () => {
    const recs = [...(await codexGeminiRecords()), ...(await sampleRecords())];
    const models = new Set(countUsage(recs).filter((c) => c.model !== null).map((c) => c.model!));
    expect([...models].sort()).toEqual(
      expect.arrayContaining(["gemini-3-pro", "gemini-3-pro-image-preview", "gpt-5-1-codex-2025-11-13", "gpt-5.3-codex", "gpt-5.4", "gpt-5.5", "claude-opus-4-6"]),
    );
    const unpriced = [...models].filter((m) => pricing.model(m) === undefined);
    expect(unpriced).toEqual([]);
    // gpt-5-1-codex is read as gpt-5.1-codex, which the dataset prices as its own matcher says.
    expect(pricing.model("gpt-5-1-codex-2025-11-13")!.id).toBe(calcPrice({ input_tokens: 1 }, "gpt-5.1-codex")!.model.id);
    expect(pricing.model("gemini-3-pro")!.id).toBe("gemini-3-pro-preview");
  });

  it("the Claude Code fixtures, except Claude Code's <synthetic> placeholder", async () => {
    const models = new Set(countUsage(await claudeRecords()).filter((c) => c.model !== null).map((c) => c.model!));
    expect([...models].filter((m) => pricing.model(m) === undefined)).toEqual(["<synthetic>"].filter((m) => models.has(m)));
  });

  it("model ids the way users write them: dated, -latest, provider prefixes, Bedrock and Vertex spellings", () => {
    const cases: [string, string, string][] = [
      ["claude-sonnet-4-5-20250929", "anthropic", "claude-sonnet-4-5"],
      ["anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"],
      ["claude-3-5-sonnet-latest", "anthropic", "claude-3-5-sonnet"],
      ["claude-opus-4-6[1m]", "anthropic", "claude-opus-4-6"],
      ["vertex_ai/claude-sonnet-4-5@20250929", "anthropic", "claude-sonnet-4-5"],
      ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "aws", "regional.anthropic.claude-sonnet-4-5-20250929-v1:0"],
      ["bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "aws", "regional.anthropic.claude-sonnet-4-5-20250929-v1:0"],
      ["openai/gpt-5.4", "openai", "gpt-5.4"],
      ["models/gemini-2.5-pro", "google", "gemini-2.5-pro"],
      ["gpt-5-1-codex-2025-11-13", "openai", calcPrice({ input_tokens: 1 }, "gpt-5.1-codex")!.model.id],
    ];
    for (const [id, provider, model] of cases) {
      const m = pricing.model(id);
      expect(m && [m.provider, m.id], id).toEqual([provider, model]);
    }
    for (const id of ["totally-unknown-model", "sonnet", "<synthetic>", "", "gpt-99"]) expect(pricing.model(id), id).toBeUndefined();
    expect(modelCandidates("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0")[0]).toEqual({ provider: "aws", id: "jp.anthropic.claude-haiku-4-5-20251001-v1:0" });
  });

  it("lake's arithmetic equals genai-prices' calcPrice on every fleet model, over many usages and times", async () => {
    const recs = [...(await codexGeminiRecords()), ...(await sampleRecords()), ...(await claudeRecords())];
    const models = [...new Set(countUsage(recs).map((c) => c.model).filter((m): m is string => m !== null && pricing.model(m) !== undefined))];
    models.push("gpt-5.4", "gemini-2.5-pro", "claude-sonnet-4-5", "gpt-5");
    let n = 0;
    let seed = 7;
    const rnd = (k: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % k);
    for (const model of models) {
      for (let i = 0; i < 40; i++) {
        const fresh = rnd(3) === 0 ? rnd(400_000) : rnd(5_000);
        const read = rnd(2) ? rnd(300_000) : 0;
        const write = rnd(2) ? rnd(60_000) : 0;
        const w1h = write && rnd(2) ? rnd(write + 1) : 0;
        const out = rnd(20_000);
        const ts = ["2025-03-01T12:00:00Z", "2026-02-11T21:00:00Z", "2026-09-01T03:30:00Z"][rnd(3)]!;
        const ours = pricing.cost(model, { input_tokens: fresh, cached_input_tokens: read, cache_write_tokens: write, cache_write_1h_tokens: w1h, output_tokens: out }, ts)!;
        const m = pricing.model(model)!;
        const theirs = calcPrice(
          { input_tokens: fresh + read + write, cache_read_tokens: read, cache_write_tokens: write, ...(w1h ? { cache_write_1h_tokens: w1h } : {}), output_tokens: out },
          m.matched,
          { providerId: m.provider, timestamp: new Date(ts) },
        );
        expect(theirs, `${model} as ${m.provider}/${m.id}`).not.toBeNull();
        // genai-prices also adds per-request and tool prices lake has no usage for (web searches): only token prices compare.
        const tokenOnly = theirs!.total_price - (theirs!.model_price.requests_kcount !== undefined ? Number(theirs!.model_price.requests_kcount) / 1000 : 0);
        expect(ours, `${model} ${ts} ${fresh}/${read}/${write}/${w1h}/${out}`).toBeCloseTo(tokenOnly, 9);
        n++;
      }
    }
    expect(n).toBeGreaterThan(400);
  });
});

describe("costs end to end: tiers, 1-hour writes, recorded costs, unknown models, --pricing, rollups", () => {
  const root = tempDir("reader-pricing");
  const store = pathToFileURL(root).href;
  const env = { LAKE_READER_CACHE: join(tempDir("reader-pricing-cache"), "cache") };
  const base = { runtime: "claude-code", session_id: "p-1", stream: "main", kind: "assistant" as const, adapter: "test", adapter_version: "0", source_path: "p.jsonl", usage_mode: "delta" as const };
  const raw: RawRecord[] = [
    // A Sonnet 4.5 response with a 250,000-token prompt: the whole response at the > 200K price.
    { ...base, record_id: "a1", ts: "2026-03-02T10:00:00.000Z", model: "claude-sonnet-4-5-20250929", text: "long", usage: { input_tokens: 50_000, cached_input_tokens: 200_000, output_tokens: 1_000 }, usage_key: "r1" },
    // 1-hour cache writes: 2 × input for Sonnet ($6), the other writes at $3.75.
    { ...base, record_id: "a2", ts: "2026-03-02T10:01:00.000Z", model: "claude-sonnet-4-5-20250929", text: "cached", usage: { input_tokens: 10, cache_write_tokens: 10_000, cache_write_1h_tokens: 4_000, output_tokens: 100 }, usage_key: "r2" },
    // A response with the runtime's own recorded cost (Claude Code costUSD).
    { ...base, record_id: "a3", ts: "2026-03-02T10:02:00.000Z", model: "claude-sonnet-4-5-20250929", text: "recorded", usage: { input_tokens: 1_000, output_tokens: 1_000 }, usage_key: "r3", cost_usd: 0.5 },
    // An unknown model beside the known ones.
    { ...base, record_id: "a4", ts: "2026-03-02T10:03:00.000Z", model: "acme-coder-2", text: "private", usage: { input_tokens: 2_000, output_tokens: 500 }, usage_key: "r4" },
  ];
  const records = raw.map((r) => canonicalize(r));
  const tiered = (50_000 * 6 + 200_000 * 0.6 + 1_000 * 22.5) / 1e6;
  const oneHour = (10 * 3 + 6_000 * 3.75 + 4_000 * 6 + 100 * 15) / 1e6;
  const calculated3 = (1_000 * 3 + 1_000 * 15) / 1e6;
  type Report = { sessions: Row[]; totals: Row; pricing: Row };
  const session = (mode: string, extra: string[] = []) => runJson<Report>(["usage", "session", "--json", "--cost-mode", mode, "--store", store, ...extra], env);
  let bronze: Record<string, Report>;

  beforeAll(async () => {
    await pushBronze(root, records);
    bronze = { calculate: await session("calculate"), recorded: await session("recorded"), auto: await session("auto") };
  });

  it("prices the tiered response, the 1-hour writes and the recorded cost under each cost mode; the unknown model stays out of the cost", () => {
    const calc = bronze.calculate!.sessions[0]!;
    expect(calc.cost_usd).toBeCloseTo(tiered + oneHour + calculated3, 6);
    expect(calc.cost_source).toBe("calculated");
    expect(calc.cache_write_1h_tokens).toBe(4_000);
    expect(calc.unpriced_tokens).toBe(2_500);
    expect(calc.unpriced_models).toEqual(["acme-coder-2"]);
    const rec = bronze.recorded!.sessions[0]!;
    expect(rec.cost_usd).toBeCloseTo(0.5, 9);
    expect(rec.cost_source).toBe("recorded");
    expect(rec.unpriced_tokens).toBe(251_000 + 10_110 + 2_500);
    const auto = bronze.auto!.sessions[0]!;
    expect(auto.cost_usd).toBeCloseTo(tiered + oneHour + 0.5, 6);
    expect(auto.cost_source).toBe("mixed");
    expect(auto.unpriced_tokens).toBe(2_500);
    expect(bronze.auto!.pricing).toMatchObject({ cost_mode: "auto", unpriced_models: ["acme-coder-2"], dataset: DATASET });
    // Totals keep the known cost.
    expect(bronze.calculate!.totals.cost_usd).toBeCloseTo(tiered + oneHour + calculated3, 6);
  });

  it("the table shows the priced sum beside the unpriced tokens", async () => {
    const t = await run(["usage", "daily", "--store", store], env);
    expect(t.code).toBe(0);
    expect(t.out).toContain(`$${(tiered + oneHour + calculated3).toFixed(2)} + unpriced`);
    expect(t.out).toMatch(/unpriced \(2,500 tokens, not in the cost\): acme-coder-2/);
    const bad = await run(["usage", "daily", "--cost-mode", "guess", "--store", store], env);
    expect(bad.code).toBe(2);
  });

  it("--pricing FILE adds a private model (lake's format and LiteLLM's), overrides a known one, and a bad file is exit 6 naming it", async () => {
    const aside = tempDir("reader-pricing-files");
    const lake = join(aside, "prices-lake.json");
    writeFileSync(lake, JSON.stringify({ models: { "acme-coder-2": { input_mtok: 1, output_mtok: 4 }, "claude-sonnet-4-5": [{ prices: { input_mtok: 1, output_mtok: 1 } }, { start_date: "2026-03-02", prices: { input_mtok: 2, output_mtok: 2 } }] } }));
    const a = (await session("calculate", ["--pricing", lake])).sessions[0]!;
    const sonnet = (251_000 + 10_110 + 2_000) * 2; // no cache prices in the override: reads and writes cost input
    expect(a.cost_usd).toBeCloseTo((sonnet + 2_000 * 1 + 500 * 4) / 1e6, 9);
    expect(a.unpriced_tokens).toBe(0);
    const litellm = join(aside, "prices-litellm.json");
    writeFileSync(litellm, JSON.stringify({ sample_spec: { input_cost_per_token: 0 }, "acme/acme-coder-2": { input_cost_per_token: 2e-6, output_cost_per_token: 8e-6, litellm_provider: "acme", mode: "chat" }, "dall-e": { output_cost_per_image: 0.04 } }));
    const b = (await session("calculate", ["--pricing", litellm])).sessions[0]!;
    expect(b.cost_usd).toBeCloseTo(tiered + oneHour + calculated3 + (2_000 * 2 + 500 * 8) / 1e6, 6);
    const p = await runJson<{ models: Row[]; file: string }>(["pricing", "--json", "--pricing", litellm, "--store", store], env);
    expect(p.file).toBe(litellm);
    expect(p.models.find((m) => m.model === "acme-coder-2")).toMatchObject({ priced: true, source: "override" });
    expect(p.models.find((m) => m.model === "claude-sonnet-4-5-20250929")).toMatchObject({ priced: true, price_model: "claude-sonnet-4-5", provider: "anthropic", source: "dataset" });
    const broken = join(aside, "prices-bad.json");
    writeFileSync(broken, JSON.stringify({ models: { x: { input_mtok: -1, output_mtok: 1 } } }));
    const bad = await run(["usage", "daily", "--pricing", broken, "--store", store], env);
    expect(bad.code).toBe(EXIT.corrupt);
    expect(bad.err).toMatch(new RegExp(`^lake-reader usage: ${broken.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: not a pricing file: .*input_mtok`));
    const missing = await run(["usage", "daily", "--pricing", join(root, "nope.json"), "--store", store], env);
    expect(missing.code).toBe(EXIT.notFound);
  });

  it("lake-reader pricing lists the dataset and the fleet's priced and unpriced models", async () => {
    const p = await runJson<{ dataset: Row; models: Row[] }>(["pricing", "--json", "--store", store], env);
    expect(p.dataset).toEqual(DATASET);
    expect(p.models.map((m) => [m.model, m.priced])).toEqual([["acme-coder-2", false], ["claude-sonnet-4-5-20250929", true]]);
    const t = await run(["pricing", "--store", store], env);
    expect(t.out).toMatch(/unpriced: acme-coder-2 \(add them with --pricing FILE\)/);
  });

  it("a compacted fleet prices the same from its usage rollup (prompt-size classes, recorded costs apart) without reading a row", async () => {
    execFileSync(process.execPath, [MAINT, "init", "--store", store, "--fleet-id", "f1"]);
    execFileSync(process.execPath, [MAINT, "compact", "--store", store, "--json"]);
    const gen = readdirSync(join(root, "sessions", "compacted"), { recursive: true }).map(String).filter((f) => f.endsWith("usage.json"));
    expect(gen.length).toBe(1);
    const doc = JSON.parse(readFileSync(join(root, "sessions", "compacted", gen[0]!), "utf8")) as { version: number; rows: unknown[][] };
    expect(doc.version).toBe(2);
    // The 250K-prompt response sits in its own class (3), the recorded one in its own row.
    expect(doc.rows.map((r) => [r[3], r[4], r[r.length - 1]])).toEqual([
      ["acme-coder-2", 0, null],
      ["claude-sonnet-4-5-20250929", 0, null],
      ["claude-sonnet-4-5-20250929", 0, 0.5],
      ["claude-sonnet-4-5-20250929", 3, null],
    ]);
    for (const f of readdirSync(join(root, "sessions", "compacted"), { recursive: true }).map(String).filter((f) => f.endsWith(".parquet"))) writeFileSync(join(root, "sessions", "compacted", f), "broken");
    for (const mode of ["calculate", "recorded", "auto"]) expect(await session(mode), mode).toEqual(bronze[mode]);
  });
});
