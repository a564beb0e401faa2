// The pricing table shipped with lake-reader: public list prices in USD per million tokens, per
// model, for input (fresh), output, cache reads and cache writes. Works offline. A model that is
// not in the table is reported as unpriced — never priced as zero.
import type { Usage } from "@lake/events";

/** Prices of one model, USD per million tokens. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  readonly cache_read: number;
  readonly cache_write: number;
}

/** Version and date of the table (shown by `usage`, written in `--json` under `pricing`). */
export const PRICING_VERSION = "2026.02-1";
/** The date the prices were taken from the providers' public price lists. */
export const PRICING_DATE = "2026-02-15";

const p = (input: number, output: number, cache_read: number, cache_write: number): ModelPrice => ({ input, output, cache_read, cache_write });

// Anthropic: cache write = 5-minute cache write price (1.25 × input); cache read = 0.1 × input.
const OPUS_45 = p(5, 25, 0.5, 6.25);
const OPUS_4 = p(15, 75, 1.5, 18.75);
const SONNET = p(3, 15, 0.3, 3.75);
const HAIKU_45 = p(1, 5, 0.1, 1.25);
const HAIKU_35 = p(0.8, 4, 0.08, 1);
const HAIKU_3 = p(0.25, 1.25, 0.03, 0.3);

/**
 * The table. OpenAI does not bill cache writes separately (cache_write 0 is the list price, not a
 * guess); Gemini's cache storage is billed per hour and is not a token price, so a Gemini cache
 * write is priced as input (Gemini CLI does not report cache writes).
 */
export const PRICES: Readonly<Record<string, ModelPrice>> = {
  // Anthropic Claude
  "claude-opus-4-6": OPUS_45,
  "claude-opus-4-5": OPUS_45,
  "claude-opus-4-1": OPUS_4,
  "claude-opus-4": OPUS_4,
  "claude-opus-4-0": OPUS_4,
  "claude-3-opus": OPUS_4,
  "claude-sonnet-4-5": SONNET,
  "claude-sonnet-4": SONNET,
  "claude-sonnet-4-0": SONNET,
  "claude-3-7-sonnet": SONNET,
  "claude-3-5-sonnet": SONNET,
  "claude-haiku-4-5": HAIKU_45,
  "claude-3-5-haiku": HAIKU_35,
  "claude-3-haiku": HAIKU_3,
  // OpenAI / Codex
  "gpt-5": p(1.25, 10, 0.125, 0),
  "gpt-5-codex": p(1.25, 10, 0.125, 0),
  "gpt-5.1": p(1.25, 10, 0.125, 0),
  "gpt-5.1-codex": p(1.25, 10, 0.125, 0),
  "gpt-5.1-codex-max": p(1.25, 10, 0.125, 0),
  "gpt-5.1-codex-mini": p(0.25, 2, 0.025, 0),
  "gpt-5.2": p(1.75, 14, 0.175, 0),
  "gpt-5.2-codex": p(1.75, 14, 0.175, 0),
  "gpt-5-mini": p(0.25, 2, 0.025, 0),
  "gpt-5-nano": p(0.05, 0.4, 0.005, 0),
  "codex-mini-latest": p(1.5, 6, 0.375, 0),
  "gpt-4.1": p(2, 8, 0.5, 0),
  "gpt-4.1-mini": p(0.4, 1.6, 0.1, 0),
  "gpt-4.1-nano": p(0.1, 0.4, 0.025, 0),
  "gpt-4o": p(2.5, 10, 1.25, 0),
  "gpt-4o-mini": p(0.15, 0.6, 0.075, 0),
  o3: p(2, 8, 0.5, 0),
  "o3-mini": p(1.1, 4.4, 0.55, 0),
  "o4-mini": p(1.1, 4.4, 0.275, 0),
  o1: p(15, 60, 7.5, 0),
  // Google Gemini (prompts up to 200k tokens)
  "gemini-3-pro-preview": p(2, 12, 0.2, 2),
  "gemini-2.5-pro": p(1.25, 10, 0.125, 1.25),
  "gemini-2.5-flash": p(0.3, 2.5, 0.03, 0.3),
  "gemini-2.5-flash-lite": p(0.1, 0.4, 0.01, 0.1),
  "gemini-2.0-flash": p(0.1, 0.4, 0.025, 0.1),
  "gemini-2.0-flash-lite": p(0.075, 0.3, 0.075, 0.075),
};

/**
 * The table key of a model id, or undefined when the model is not priced. Lower-cased; a provider
 * prefix (`anthropic/`, `openai/`, `google/`, `models/`), a bracketed suffix (`[1m]`), `-latest`
 * on Claude ids, Bedrock's region/vendor prefix and `-v1:0` suffix, and a release date suffix (`-20250929`, `-2025-04-14`) are ignored. Nothing else
 * is guessed: an unknown variant stays unpriced.
 */
export function priceKey(model: string | null | undefined): string | undefined {
  if (!model) return undefined;
  let m = model.trim().toLowerCase();
  m = m.replace(/^(anthropic|openai|google|models|vertex_ai|bedrock|converse)\//, "");
  m = m.replace(/^(?:[a-z]{2,4}\.)?anthropic\./, ""); // Bedrock: "jp.anthropic.claude-…"
  m = m.replace(/-v\d+(?::\d+)?$/, ""); // Bedrock: "…-v1:0"
  m = m.replace(/\[[^\]]*\]$/, "");
  m = m.replace(/-(\d{8}|\d{4}-\d{2}-\d{2})$/, "");
  if (m.startsWith("claude-")) m = m.replace(/-latest$/, "");
  return Object.prototype.hasOwnProperty.call(PRICES, m) ? m : undefined;
}

/** The price of a model, or undefined when it is not in the table. */
export function priceOf(model: string | null | undefined): ModelPrice | undefined {
  const k = priceKey(model);
  return k === undefined ? undefined : PRICES[k];
}

/** Cost in USD of `usage` at `price` (absent keys cost nothing: nobody reported them). */
export function costOf(usage: Usage, price: ModelPrice): number {
  return (
    ((usage.input_tokens ?? 0) * price.input +
      (usage.output_tokens ?? 0) * price.output +
      (usage.cached_input_tokens ?? 0) * price.cache_read +
      (usage.cache_write_tokens ?? 0) * price.cache_write) /
    1_000_000
  );
}
