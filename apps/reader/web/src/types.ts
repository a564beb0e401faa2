// The API's JSON shapes: the CLI's --json objects (their types come from the reader itself).
import type { PricingInfo as Pricing, UsageNumbers } from "../../src/internal/usage.js";
export type { ShowConversation, ShowItem, OtherStream } from "../../src/internal/show.js";
export type { EventHit, ClaimHit } from "../../src/internal/commands/search.js";
export type { ResponseRow } from "../../src/internal/serve/api.js";
export type { RosterEntry, IntentRecord, LeaseListEntry } from "@lake/layout";

/** Token and cost keys of every usage row, and the pricing facts beside a report. */
export type { UsageNumbers, PricingInfo as Pricing } from "../../src/internal/usage.js";
/** `usage daily --json [--by K]` (with --by model|runtime, one row per day and key). */
export interface DailyJson {
  daily: (UsageNumbers & { date: string; models: string[]; model?: string | null; runtime?: string | null })[];
  totals: UsageNumbers;
  pricing: Pricing;
  /** The zone the days are counted in. */
  timezone: string;
}

/** `usage session --json`. */
export interface SessionUsageJson {
  sessions: (UsageNumbers & { session_id: string; runtime: string; models: string[] })[];
  totals: UsageNumbers;
  pricing: Pricing;
}

/** `usage blocks --json`. */
export interface BlocksJson {
  blocks: (UsageNumbers & { start: string; end: string; last_ts: string; active: boolean; sessions: number; models: string[] })[];
  totals: UsageNumbers;
  untimed_tokens: number | null;
  pricing: Pricing;
}

/** A row of `sessions --json` (the sessions view). */
export interface SessionRow {
  session_id: string;
  runtime: string;
  agent: string;
  fleet: string;
  first_ts: string | null;
  last_ts: string | null;
  duration_s: number | null;
  events: number;
  streams: number;
  user_turns: number;
  assistant_turns: number;
  tool_calls: number;
  tool_errors: number;
  models: string[] | null;
  cwd: string | null;
  repo: string | null;
  branch: string | null;
  sealed: boolean;
}
