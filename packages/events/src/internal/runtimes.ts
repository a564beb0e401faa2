/** Runtime ids (docs/ARCHITECTURE.md). Decoded as an open string: a newer adapter may add one. */
export const RUNTIMES = ["claude-code", "codex", "gemini", "broca", "hook"] as const;
export type Runtime = (typeof RUNTIMES)[number];
