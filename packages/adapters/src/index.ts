/**
 * @lake/adapters — runtime adapters: Claude Code, Codex CLI, Gemini CLI, broca WAL and hook
 * events → canonical lake records; discovery of vendor stores (always read-only).
 */
export { AdaptersError, isAdaptersError } from "./internal/errors.js";
export type { AdaptersErrorCode, AdaptersErrorData } from "./internal/errors.js";
export type { Adapter, AdapterState, DiscoveredSource, Discovery, DiscoveryProblem, DiscoverOptions, SourceLine, SourceMode, SourceRef } from "./internal/types.js";
export { readLines } from "./internal/lines.js";
export type { ReadLinesOptions } from "./internal/lines.js";
export { globToRegExp, sourceFilter } from "./internal/discover.js";
export { claudeCodeAdapter, claudeUsage } from "./internal/claude.js";
export { codexAdapter, codexUsage } from "./internal/codex.js";
export type { CodexState } from "./internal/codex.js";
export { geminiAdapter, geminiUsage, geminiUsageKey, dropRewound } from "./internal/gemini.js";
export type { GeminiState } from "./internal/gemini.js";
export { brocaAdapter, parseWal, brocaRecords, defaultBrocaRoot } from "./internal/broca.js";
export type { BrocaState } from "./internal/broca.js";
export { hookAdapter, defaultHookSpool } from "./internal/hook.js";
export { getAdapter, listAdapters, registerAdapter, guessRuntime, parseFile, readSession } from "./internal/read.js";
export type { ParseFileOptions, ReadSessionOptions, SessionRead } from "./internal/read.js";
