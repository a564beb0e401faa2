// Shared test helpers: vector loading and small record builders.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const vectorsDir = join(dirname(fileURLToPath(import.meta.url)), "vectors");

/** Decode a .hex vector: whitespace is not data. */
export function readHex(file: string): Buffer {
  return Buffer.from(readFileSync(join(vectorsDir, file), "utf8").replace(/\s+/g, ""), "hex");
}

export function sha256(b: Uint8Array): string {
  return createHash("sha256").update(b).digest("hex");
}

export interface WalVector {
  name: string;
  file: string;
  description: string;
  bytes: number;
  sha256: string;
  frame_digests: (string | null)[];
  reencode: boolean;
  expect: {
    status: "ok" | "corrupt" | "spliced" | "sequence_error" | "newer_writer";
    error_code: string | null;
    error_offset: number | null;
    lineage_id: string | null;
    torn_tail: boolean;
    records: { seq: number; type: string; gated: boolean }[];
    skipped: { seq: number; type: string }[];
  };
}

export interface ArchiveVector {
  name: string;
  file: string;
  bytes: number;
  sha256: string;
  expect: { sealed: boolean; members: { addr: string; payload_len: number; sha256_ok: boolean }[]; index_damaged: boolean | null };
}

export const manifest = JSON.parse(readFileSync(join(vectorsDir, "vectors.json"), "utf8")) as {
  addresses: { project_root: string; harness: string; session: string; addr: string }[];
  wal: WalVector[];
  archive: ArchiveVector[];
};

export const TRIPLE = { project_root: "/tmp/p", harness: "runner", session: "s1" };

export const runStarted = {
  type: "run_started",
  run_id: "run-1",
  session: TRIPLE,
  config: {
    model: { provider_module_id: "anthropic", model_id: "claude" },
    tools: [],
    tool_choice: "auto",
    generation: {},
    response_format: "text",
    context_epoch: 0,
    renderer_version: 1,
  },
  input: [{ role: "user", content: "hi" }],
} as const;
