/**
 * `@lake/adapters/discover`: finding every runtime's sources (the same discovery, default roots and
 * describe as the adapters', in the same order as `listAdapters`) without the broca WAL decoder or
 * the record schema (zod), so a program that discovers before it knows whether anything is new (the
 * collector's pass) starts without them. Converting lines needs the adapter: `getAdapter` from the
 * package root.
 */
import { brocaDiscoverer } from "./internal/broca-discover.js";
import { claudeCodeAdapter } from "./internal/claude.js";
import { codexAdapter } from "./internal/codex.js";
import { geminiAdapter } from "./internal/gemini.js";
import { hookAdapter } from "./internal/hook.js";
import type { Adapter } from "./internal/types.js";

export type { DiscoveredSource, Discovery, DiscoveryProblem, DiscoverOptions, SourceMode, SourceRef } from "./internal/types.js";
export { AdaptersError, isAdaptersError } from "./internal/errors.js";

/** The discovery half of an adapter. */
export type Discoverer = Pick<Adapter, "runtime" | "name" | "version" | "defaultRoots" | "discover" | "describe">;

/** Every built-in runtime's discoverer, in `listAdapters` order. */
export function listDiscoverers(): Discoverer[] {
  return [claudeCodeAdapter, codexAdapter, geminiAdapter, hookAdapter, brocaDiscoverer];
}
