/**
 * `@lake/adapters/discover`: finding every runtime's sources (the same discovery, default roots and
 * describe as the adapters', in the same order as `listAdapters`) without the broca WAL decoder or
 * the record schema (zod), so a program that discovers before it knows whether anything is new (the
 * collector's pass) starts without them. The line runtimes' whole adapters (`lineAdapter`) and
 * `readLines` are here too, so converting their lines needs neither; broca's records need the package
 * root (`brocaRecords`, `getAdapter("broca")`).
 */
import { brocaDiscoverer } from "./internal/broca-discover.js";
import { claudeCodeAdapter } from "./internal/claude.js";
import { codexAdapter } from "./internal/codex.js";
import { geminiAdapter } from "./internal/gemini.js";
import { hookAdapter } from "./internal/hook.js";
import type { Adapter } from "./internal/types.js";

export { readLines } from "./internal/lines.js";
export type { ReadLinesOptions } from "./internal/lines.js";

export type { Adapter, AdapterState, DiscoveredSource, Discovery, DiscoveryProblem, DiscoverOptions, SourceLine, SourceMode, SourceRef } from "./internal/types.js";
export { AdaptersError, isAdaptersError } from "./internal/errors.js";

/** The discovery half of an adapter. */
export type Discoverer = Pick<Adapter, "runtime" | "name" | "version" | "defaultRoots" | "discover" | "describe">;

/** Every built-in runtime's discoverer, in `listAdapters` order. */
export function listDiscoverers(): Discoverer[] {
  return [claudeCodeAdapter, codexAdapter, geminiAdapter, hookAdapter, brocaDiscoverer];
}

/**
 * The whole adapter of a built-in runtime whose sources are read as lines or snapshots (Claude Code,
 * Codex, Gemini CLI, hook events): the same object `getAdapter` returns. Undefined for broca (its
 * frames are decoded by the package root) and for any other runtime.
 */
export function lineAdapter(runtime: string): Adapter | undefined {
  return [claudeCodeAdapter, codexAdapter, geminiAdapter, hookAdapter].find((a) => a.runtime === runtime);
}
