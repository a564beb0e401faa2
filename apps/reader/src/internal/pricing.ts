// Prices, from a maintained dataset: @pydantic/genai-prices (bundled data, offline), plus a
// user's `--pricing FILE`. The one place lake-reader turns tokens into USD — every report (and
// anything built on them) calls priceContributions / Pricing.cost.
//
// The dataset is loaded only when a cost is computed. Importing genai-prices costs ~65 ms (an
// 830 kB module of object literals); its data as JSON parses in ~10 ms, so the first run copies
// the bundled data into the reader cache (pricing/genai-prices-<version>.json) and later runs read
// that. Matching and arithmetic follow genai-prices' calcPrice (tested equal to it on every
// fleet model: test/pricing.test.ts), done here so that a million responses price in
// milliseconds: a model is resolved once, not once per response.
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeAtomic } from "@lake/durable";
import type { Usage } from "@lake/events/usage";
import { keptAnswer, type Locations } from "./context.js";
import { ReaderError } from "./errors.js";
import type { FleetFiles } from "./fleet.js";

/** genai-prices' match logic (a model's or provider's id pattern). */
export type MatchLogic =
  | { and: MatchLogic[] }
  | { or: MatchLogic[] }
  | { equals: string }
  | { starts_with: string }
  | { ends_with: string }
  | { contains: string }
  | { regex: string };

/** A price: USD per unit, flat or by the request's input size (tier `price` applies when input > `start`). */
export type Price = number | { base: number; tiers: { start: number; price: number }[] };

/** Prices of one model at one time, keyed as genai-prices keys them (`input_mtok`, `cache_write_1h_mtok` …). */
export type ModelPrice = Record<string, Price | undefined>;

/** A price list entry: from `start_date` (UTC day), or at a time of day, or always (no constraint). */
export interface ConditionalPrice {
  constraint?: { type: "start_date"; start_date: string } | { type: "time_of_date"; start_time: string; end_time: string };
  prices: ModelPrice;
}

interface DatasetModel {
  id: string;
  match: MatchLogic;
  prices: ModelPrice | ConditionalPrice[];
}

interface DatasetProvider {
  id: string;
  name: string;
  model_match?: MatchLogic;
  provider_match?: MatchLogic;
  fallback_model_providers?: string[];
  models: DatasetModel[];
}

/** Where prices come from. */
export interface DatasetInfo {
  /** `@pydantic/genai-prices`. */
  readonly name: string;
  /** The package version (its data is the version's). */
  readonly version: string;
  /** The version's release date (npm publish date, yyyy-mm-dd). */
  readonly date: string;
}

/** The dataset package, and the date its pinned version was published (update both together; a test checks the version). */
export const DATASET = { name: "@pydantic/genai-prices", version: "0.1.8", date: "2026-09-23" } as const;

/** A model as priced: the dataset's (or the override file's) model it resolved to. */
export interface PricedModel {
  /** The model id in the dataset or the override file. */
  readonly id: string;
  /** The provider whose prices apply (`anthropic`, `aws`, `openai` …), or `override`. */
  readonly provider: string;
  readonly source: "dataset" | "override";
  /** The spelling of the model id that matched (after modelCandidates' normalization). */
  readonly matched: string;
  /** Price list, oldest first (genai-prices' order). */
  readonly prices: readonly ConditionalPrice[];
}

/** How a cost is chosen: computed from tokens, the runtime's recorded cost, or recorded where there is one. */
export type CostMode = "calculate" | "recorded" | "auto";
export const COST_MODES: readonly CostMode[] = ["calculate", "recorded", "auto"];

/** What the reader needs of a counted response to price it. */
export interface Priceable {
  readonly model: string | null;
  readonly ts: string | null;
  readonly usage: Usage;
  readonly cost_usd?: number | undefined;
}

/** Options of {@link Pricing.cost}. */
export interface CostOptions {
  /**
   * The prompt size a tiered price is chosen by; default the usage's own input (fresh + cache
   * reads + cache writes) — right for one response; a sum of responses must say its class.
   */
  readonly prompt?: number;
  /** Responses the usage sums (for per-request prices); default 1. */
  readonly responses?: number;
}

function matches(m: MatchLogic, id: string): boolean {
  if ("or" in m) return m.or.some((x) => matches(x, id));
  if ("and" in m) return m.and.every((x) => matches(x, id));
  if ("equals" in m) return id === m.equals.toLowerCase();
  if ("starts_with" in m) return id.startsWith(m.starts_with.toLowerCase());
  if ("ends_with" in m) return id.endsWith(m.ends_with.toLowerCase());
  if ("contains" in m) return id.includes(m.contains.toLowerCase());
  if ("regex" in m) return new RegExp(m.regex).test(id);
  return false;
}

const BEDROCK_ID = /^(?:[a-z]{2,8}\.)?(?:anthropic|meta|amazon|mistral|cohere|ai21|deepseek|openai|qwen)\./;

/**
 * The ids to look a model up by, most specific first, and the provider the spelling names (Bedrock
 * ids are priced at Bedrock's prices). Lower-cased and trimmed; `[1m]`-style suffixes dropped;
 * provider path prefixes (`anthropic/`, `openai/`, `google/`, `models/`, `vertex_ai/`, `bedrock/`,
 * `converse/` …) dropped; Vertex `@date` read as `-date`; then without the Bedrock region/vendor
 * prefix and `-v1:0` suffix, without a release date (`-20250929`, `-2025-11-13`), with
 * `gpt-5-1` read as `gpt-5.1`, without `-latest`, and with `-preview` added (Gemini CLI reports
 * `gemini-3-pro` for `gemini-3-pro-preview`).
 */
export function modelCandidates(model: string): { provider?: string; id: string }[] {
  let m = model.trim().toLowerCase().replace(/\[[^\]]*\]$/, "");
  const prefixes = m.split("/");
  m = prefixes.pop() ?? m;
  m = m.replace(/@(\d{8})$/, "-$1");
  const out: { provider?: string; id: string }[] = [];
  const seen = new Set<string>();
  const add = (id: string, provider?: string) => {
    const k = `${provider ?? ""}\0${id}`;
    if (id && !seen.has(k)) {
      seen.add(k);
      out.push(provider === undefined ? { id } : { provider, id });
    }
  };
  const bedrock = BEDROCK_ID.test(m) || prefixes.includes("bedrock") || prefixes.includes("converse");
  if (bedrock) add(m, "aws");
  let base = m.replace(BEDROCK_ID, "").replace(/-v\d+(?::\d+)?$/, "");
  add(base);
  base = base.replace(/-(\d{8}|\d{4}-\d{2}-\d{2})$/, "");
  add(base);
  const dotted = base.replace(/^(gpt-\d+)-(\d)(?=-|$)/, "$1.$2");
  add(dotted);
  const noLatest = dotted.replace(/-latest$/, "");
  add(noLatest);
  if (/^gemini-/.test(noLatest) && !noLatest.endsWith("-preview")) add(`${noLatest}-preview`);
  return out;
}

function asList(p: ModelPrice | ConditionalPrice[]): ConditionalPrice[] {
  return Array.isArray(p) ? p : [{ prices: p }];
}

function secondsOfDay(t: string): number {
  const m = /^(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(t);
  if (!m) return 0;
  const off = m[4] === "Z" ? 0 : (m[4]!.startsWith("-") ? -1 : 1) * (Number(m[4]!.slice(1, 3)) * 3600 + Number(m[4]!.slice(4, 6)) * 60);
  return (Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) - off + 86400) % 86400;
}

/** The entry of a price list in force at `t` (ms): the last whose constraint holds, as genai-prices picks. */
export function priceAt(list: readonly ConditionalPrice[], t: number): ModelPrice {
  for (let i = list.length - 1; i >= 0; i--) {
    const e = list[i]!;
    const c = e.constraint;
    if (c === undefined) return e.prices;
    if (c.type === "start_date") {
      if (t >= Date.parse(`${c.start_date}T00:00:00Z`)) return e.prices;
    } else {
      const d = new Date(t);
      const s = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds() + d.getUTCMilliseconds() / 1000;
      const a = secondsOfDay(c.start_time);
      const b = secondsOfDay(c.end_time);
      if (b < a ? s >= a || s < b : s >= a && s < b) return e.prices;
    }
  }
  return list[0]!.prices;
}

/** Cost of `n` units at `p` per `per` units, in whole pico-USD (1e-12): integers add up exactly in any order. */
function unit(p: Price | undefined, n: number, prompt: number, per: number): number {
  if (p === undefined || n <= 0) return 0;
  let price = typeof p === "number" ? p : p.base;
  if (typeof p !== "number") for (const t of p.tiers) if (prompt > t.start) price = t.price;
  return Math.round((price * 1e12) / per) * n;
}

/** USD as whole pico-USD, the unit costs are added in (so a sum is the same in any order or grouping). */
export function toPico(usd: number): number {
  return Math.round(usd * 1e12);
}

/**
 * Cost in USD of `usage` at `price`, as genai-prices computes it: each priced kind of token at its
 * own price, a kind the model has no price for at its parent's (a cache write without a write
 * price costs input; a 1-hour write without a 1-hour price costs a 5-minute write), and a tiered
 * price chosen by the prompt size (default: the usage's whole input). Absent keys count nothing.
 * Computed in whole pico-USD (toPico(costAt(…)) is exact), so sums do not depend on grouping.
 */
export function costAt(usage: Usage, price: ModelPrice, options: CostOptions = {}): number {
  const fresh = usage.input_tokens ?? 0;
  const read = usage.cached_input_tokens ?? 0;
  const write = usage.cache_write_tokens ?? 0;
  const write1h = Math.min(usage.cache_write_1h_tokens ?? 0, write);
  const out = usage.output_tokens ?? 0;
  const reasoning = Math.min(usage.reasoning_tokens ?? 0, out);
  const prompt = options.prompt ?? fresh + read + write;
  const has = (k: string) => price[k] !== undefined;
  // Leaves: what each priced kind counts once its more specific kinds are taken out.
  const w1h = has("cache_write_1h_mtok") ? write1h : 0;
  const w5m = has("cache_write_mtok") ? write - w1h : 0;
  const r = has("cache_read_mtok") ? read : 0;
  const input = fresh + read + write - r - w5m - w1h;
  const o1 = has("output_reasoning_mtok") ? reasoning : 0;
  let pico =
    unit(price.input_mtok, input, prompt, 1e6) +
    unit(price.cache_read_mtok, r, prompt, 1e6) +
    unit(price.cache_write_mtok, w5m, prompt, 1e6) +
    unit(price.cache_write_1h_mtok, w1h, prompt, 1e6) +
    unit(price.output_mtok, out - o1, prompt, 1e6) +
    unit(price.output_reasoning_mtok, o1, prompt, 1e6);
  if (price.requests_kcount !== undefined) pico += unit(price.requests_kcount, options.responses ?? 1, prompt, 1e3);
  return pico / 1e12;
}

/** The tier starts of a price list (prompt sizes where a price changes), sorted. */
export function tierStarts(list: readonly ConditionalPrice[]): number[] {
  const s = new Set<number>();
  for (const e of list) for (const p of Object.values(e.prices)) if (p !== undefined && typeof p !== "number") for (const t of p.tiers) s.add(t.start);
  return [...s].sort((a, b) => a - b);
}

/** Prices loaded for a run: the dataset, then the override file's models (which win). */
export class Pricing {
  readonly #providers: readonly DatasetProvider[];
  readonly #overrides: ReadonlyMap<string, PricedModel>;
  readonly #memo = new Map<string, PricedModel | null>();
  readonly dataset: DatasetInfo;
  /** The override file and the model ids it defines, when one was given. */
  readonly overrides: { readonly file: string; readonly models: readonly string[] } | undefined;

  constructor(dataset: DatasetInfo, providers: readonly DatasetProvider[], overrides?: { file: string; models: ReadonlyMap<string, PricedModel> }) {
    this.dataset = dataset;
    this.#providers = providers;
    this.#overrides = overrides?.models ?? new Map();
    this.overrides = overrides ? { file: overrides.file, models: [...overrides.models.keys()].sort() } : undefined;
  }

  /** The priced model a model id resolves to (overrides first), or undefined: unpriced. */
  model(model: string | null | undefined): PricedModel | undefined {
    if (!model) return undefined;
    let r = this.#memo.get(model);
    if (r === undefined) {
      r = this.#resolve(model) ?? null;
      this.#memo.set(model, r);
    }
    return r ?? undefined;
  }

  #resolve(model: string): PricedModel | undefined {
    const cands = modelCandidates(model);
    for (const c of cands) {
      const o = this.#overrides.get(c.id);
      if (o) return o;
    }
    for (const c of cands) {
      const m = this.#find(c.id, c.provider);
      if (m) return m;
    }
    return undefined;
  }

  #find(id: string, providerId: string | undefined): PricedModel | undefined {
    const provider =
      providerId !== undefined
        ? this.#providers.find((p) => p.id === providerId || (p.provider_match !== undefined && matches(p.provider_match, providerId)))
        : this.#providers.find((p) => p.model_match !== undefined && matches(p.model_match, id));
    if (!provider) return undefined;
    const inProvider = (p: DatasetProvider, x: string) => p.models.find((m) => matches(m.match, x));
    const dated = id.replace(/-(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)/g, "-$1-$2-$3");
    for (const x of dated === id ? [id] : [id, dated]) {
      let m = inProvider(provider, x);
      let owner = provider;
      if (!m) {
        for (const f of provider.fallback_model_providers ?? []) {
          const fp = this.#providers.find((p) => p.id === f);
          m = fp && inProvider(fp, x);
          if (m) {
            owner = fp!;
            break;
          }
        }
      }
      if (m) return { id: m.id, provider: owner.id, source: "dataset", matched: x, prices: asList(m.prices) };
    }
    return undefined;
  }

  /**
   * Cost in USD of `usage` of `model` at time `ts` (ISO; the price in force then — now when
   * unknown), or undefined when the model is not priced. Never zero for an unknown model.
   */
  cost(model: string | null | undefined, usage: Usage, ts: string | null | undefined, options: CostOptions = {}): number | undefined {
    const m = this.model(model);
    if (!m) return undefined;
    const t = ts ? Date.parse(ts) : Date.now();
    return costAt(usage, priceAt(m.prices, Number.isNaN(t) ? Date.now() : t), options);
  }
}

/** How one counted response (or a sum of them) was priced. */
export interface PricedCost {
  /** USD; null when unpriced (an unknown model, or no recorded cost under `recorded`). */
  readonly cost_usd: number | null;
  readonly source: "calculated" | "recorded" | null;
}

/**
 * Price one counted response under a cost mode: `calculate` from its tokens; `recorded` the
 * runtime's own cost (Claude Code's `costUSD`), unpriced without one; `auto` the recorded cost
 * where there is one, else calculated. The one cost function reports call.
 */
export function priceContribution(pricing: Pricing, c: Priceable, mode: CostMode, options: CostOptions = {}): PricedCost {
  if (mode !== "calculate" && c.cost_usd !== undefined) return { cost_usd: c.cost_usd, source: "recorded" };
  if (mode === "recorded") return { cost_usd: null, source: null };
  const usd = pricing.cost(c.model, c.usage, c.ts, options);
  return usd === undefined ? { cost_usd: null, source: null } : { cost_usd: usd, source: "calculated" };
}

/**
 * Whether a usage rollup's rows (tokens summed per session, UTC day, model and prompt-size class,
 * recorded costs apart) price exactly as their responses would: when every tier start of their
 * models' prices is one of the rollup's class boundaries (so a class lies wholly on one side of
 * it) and no price changes with the time of day (start dates change at UTC midnight). Otherwise
 * the reader counts that partition from its rows, response by response.
 */
export function rollupPriceable(pricing: Pricing, r: { readonly prompt_classes: readonly number[]; readonly rows: readonly { readonly model: string | null }[] }): boolean {
  const bounds = new Set(r.prompt_classes);
  for (const row of r.rows) {
    const m = pricing.model(row.model);
    if (!m) continue; // unpriced either way
    if (tierStarts(m.prices).some((s) => !bounds.has(s)) || m.prices.some((e) => e.constraint?.type === "time_of_date")) return false;
  }
  return true;
}

/** The installed genai-prices' package.json version, found without loading the module. */
function installedVersion(): string {
  const entry = fileURLToPath(import.meta.resolve("@pydantic/genai-prices"));
  const pkg = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")) as { version: string };
  return pkg.version;
}

/** genai-prices' bundled data, through the reader cache (see the top of this file). */
async function datasetProviders(cacheDir: string | undefined): Promise<{ version: string; providers: DatasetProvider[] }> {
  const version = installedVersion();
  const file = cacheDir === undefined ? undefined : join(cacheDir, "pricing", `genai-prices-${version}.json`);
  if (file) {
    try {
      return { version, providers: JSON.parse(readFileSync(file, "utf8")) as DatasetProvider[] };
    } catch {
      // Not cached yet (or damaged): load the package below and cache it again.
    }
  }
  const gp = await import("@pydantic/genai-prices");
  const all = (await gp.waitForUpdate()) as unknown as DatasetProvider[] | null;
  if (!all) throw new ReaderError("Corrupt", `${DATASET.name}: no bundled price data`);
  const providers = all.map((p) => ({
    id: p.id,
    name: p.name,
    ...(p.model_match ? { model_match: p.model_match } : {}),
    ...(p.provider_match ? { provider_match: p.provider_match } : {}),
    ...(p.fallback_model_providers ? { fallback_model_providers: p.fallback_model_providers } : {}),
    models: p.models.map((m) => ({ id: m.id, match: m.match, prices: m.prices })),
  }));
  if (file) {
    try {
      mkdirSync(dirname(file), { recursive: true });
      // A cache, rebuilt from the package whenever it is missing or unreadable (above): replaced
      // atomically, not fsynced (@lake/durable's policy for rebuildable caches).
      writeAtomic(file, JSON.stringify(providers), { sync: false });
    } catch {
      // A read-only cache only costs the next run the module load.
    }
  }
  return { version, providers };
}

// ---- --pricing FILE ----------------------------------------------------------------------------

const PRICE_KEYS = new Set(["input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok", "output_reasoning_mtok", "requests_kcount"]);

function bad(file: string, why: string): never {
  throw new ReaderError("Corrupt", `${file}: not a pricing file: ${why}`, { data: { file } });
}

function isPrice(v: unknown): v is Price {
  if (typeof v === "number") return Number.isFinite(v) && v >= 0;
  if (typeof v !== "object" || v === null) return false;
  const o = v as { base?: unknown; tiers?: unknown };
  return (
    typeof o.base === "number" &&
    o.base >= 0 &&
    Array.isArray(o.tiers) &&
    o.tiers.every((t: unknown) => typeof t === "object" && t !== null && Number.isSafeInteger((t as { start?: unknown }).start) && typeof (t as { price?: unknown }).price === "number" && (t as { price: number }).price >= 0)
  );
}

function lakePrice(file: string, id: string, v: unknown): ModelPrice {
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad(file, `model ${JSON.stringify(id)}: prices are not an object`);
  const out: ModelPrice = {};
  for (const [k, p] of Object.entries(v)) {
    if (!PRICE_KEYS.has(k)) bad(file, `model ${JSON.stringify(id)}: unknown price key ${JSON.stringify(k)} (expected ${[...PRICE_KEYS].join(", ")})`);
    if (!isPrice(p)) bad(file, `model ${JSON.stringify(id)}: ${k} is not a price (USD per million tokens, or {"base", "tiers": [{"start", "price"}]})`);
    out[k] = p;
  }
  if (out.input_mtok === undefined || out.output_mtok === undefined) bad(file, `model ${JSON.stringify(id)}: input_mtok and output_mtok are required`);
  return out;
}

/** LiteLLM's per-token prices (model_prices_and_context_window.json) as per-million prices. */
function litellmPrice(file: string, id: string, v: Record<string, unknown>): ModelPrice | undefined {
  const num = (k: string): number | undefined => {
    const x = v[k];
    if (x === undefined || x === null) return undefined;
    if (typeof x !== "number" || !Number.isFinite(x) || x < 0) bad(file, `model ${JSON.stringify(id)}: ${k} is not a price per token`);
    return x * 1e6;
  };
  if (num("input_cost_per_token") === undefined || num("output_cost_per_token") === undefined) return undefined; // an image/audio/embedding entry
  const tiered = (k: string): Price | undefined => {
    const base = num(k);
    if (base === undefined) return undefined;
    const above = num(`${k}_above_200k_tokens`);
    return above === undefined ? base : { base, tiers: [{ start: 200_000, price: above }] };
  };
  const out: ModelPrice = {};
  const set = (key: string, p: Price | undefined) => {
    if (p !== undefined) out[key] = p;
  };
  set("input_mtok", tiered("input_cost_per_token"));
  set("output_mtok", tiered("output_cost_per_token"));
  set("cache_read_mtok", tiered("cache_read_input_token_cost"));
  set("cache_write_mtok", tiered("cache_creation_input_token_cost"));
  set("cache_write_1h_mtok", num("cache_creation_input_token_cost_above_1hr"));
  return out;
}

/**
 * Read a `--pricing FILE`: lake's format `{"models": {"<id>": {<price key>: USD per million
 * tokens, …} | [{"start_date"?: "yyyy-mm-dd", "prices": {…}}, …]}}`, or LiteLLM's
 * model_prices_and_context_window.json shape (`{"<id>": {"input_cost_per_token": …, …}}`).
 * Ids are matched as the dataset's are (modelCandidates): the file's id is looked up exactly after
 * the same normalization. Throws ReaderError `Corrupt` naming the file.
 */
export function readPricingFile(file: string): Map<string, PricedModel> {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new ReaderError("NotFound", `${file}: no such pricing file`, { data: { file }, cause: e });
    if (code !== undefined) throw new ReaderError("Io", `${file}: cannot read: ${(e as Error).message}`, { data: { file }, cause: e });
    bad(file, (e as Error).message);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad(file, "not a JSON object");
  const out = new Map<string, PricedModel>();
  const put = (id: string, prices: ConditionalPrice[]) => {
    const key = modelCandidates(id).find((c) => c.provider === undefined)?.id ?? id.toLowerCase();
    out.set(key, { id, provider: "override", source: "override", matched: key, prices });
  };
  const models = (v as { models?: unknown }).models;
  if (models !== undefined) {
    if (typeof models !== "object" || models === null || Array.isArray(models)) bad(file, `"models" is not an object`);
    for (const [id, p] of Object.entries(models)) {
      if (Array.isArray(p)) {
        const list: ConditionalPrice[] = p.map((e: unknown, i) => {
          const o = e as { start_date?: unknown; prices?: unknown };
          if (typeof o !== "object" || o === null) bad(file, `model ${JSON.stringify(id)}: entry ${i} is not an object`);
          if (o.start_date !== undefined && (typeof o.start_date !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(o.start_date))) bad(file, `model ${JSON.stringify(id)}: entry ${i}: start_date is not yyyy-mm-dd`);
          const prices = lakePrice(file, id, o.prices);
          return typeof o.start_date === "string" ? { constraint: { type: "start_date", start_date: o.start_date }, prices } : { prices };
        });
        if (!list.length) bad(file, `model ${JSON.stringify(id)}: empty price list`);
        put(id, list);
      } else put(id, [{ prices: lakePrice(file, id, p) }]);
    }
    return out;
  }
  for (const [id, p] of Object.entries(v)) {
    if (id === "sample_spec") continue;
    if (typeof p !== "object" || p === null || Array.isArray(p)) bad(file, `model ${JSON.stringify(id)}: not an object`);
    const price = litellmPrice(file, id, p as Record<string, unknown>);
    if (price) put(id, [{ prices: price }]);
  }
  return out;
}

/** Options of {@link loadPricing}. */
export interface LoadPricingOptions {
  /** The reader cache directory (the dataset's JSON copy lives under pricing/). */
  readonly cache?: string | undefined;
  /** A `--pricing FILE` adding or overriding models. */
  readonly file?: string | undefined;
}

/** {@link loadPricing} for a fleet state: loaded once per state by a long-running process (loc.fleet). */
export function fleetPricing(loc: Locations, files: FleetFiles, file?: string | undefined): Promise<Pricing> {
  return keptAnswer(loc, files, `pricing\0${file ?? ""}`, () => loadPricing({ cache: loc.cache, file }));
}

/** Load the prices: the dataset (through the cache) and an optional override file. */
export async function loadPricing(options: LoadPricingOptions = {}): Promise<Pricing> {
  const overrides = options.file === undefined ? undefined : { file: options.file, models: readPricingFile(options.file) };
  const { version, providers } = await datasetProviders(options.cache);
  const info: DatasetInfo = version === DATASET.version ? DATASET : { name: DATASET.name, version, date: "unknown" };
  return new Pricing(info, providers, overrides);
}
