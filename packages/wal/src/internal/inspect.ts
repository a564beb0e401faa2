import type { WalDecodeOptions } from "./decode.js";
import { readWalFile } from "./codec.js";
import { isWalError, type WalErrorCode } from "./errors.js";

/** Status of an inspected WAL. */
export type WalStatus = "ok" | "corrupt" | "spliced" | "sequence_error" | "newer_writer";

/** The JSON object `lake-reader wal inspect FILE --json` prints. */
export interface WalInspection {
  /** The file inspected. */
  readonly file: string;
  /** ok, or the refusal. */
  readonly status: WalStatus;
  /** Lineage id in UUID form, or null when the file has none (or none before the refusal). */
  readonly lineage_id: string | null;
  /** True when the file ends in an unfinished frame (only meaningful when status is ok). */
  readonly torn_tail: boolean;
  /** Records of known types decoded (before the refusal, when there is one). */
  readonly records: readonly { readonly seq: number; readonly type: string; readonly gated: boolean }[];
  /** Records of unknown types, skipped. */
  readonly skipped: readonly { readonly seq: number; readonly type: string }[];
  /** The one-line refusal message, or null. */
  readonly error: string | null;
}

const STATUS: Partial<Record<WalErrorCode, WalStatus>> = {
  Corrupt: "corrupt",
  TooLarge: "corrupt",
  Spliced: "spliced",
  SequenceError: "sequence_error",
  NewerWriter: "newer_writer",
};

/**
 * Decode a WAL file and describe it. Refusals of the file's content become a status and an error
 * message (records decoded before the refusal are listed); failures to read the file at all
 * (missing, unreadable) are thrown as WalError (NotFound, Io).
 */
export async function inspectWal(path: string, options: Pick<WalDecodeOptions, "maxPassBytes"> = {}): Promise<WalInspection> {
  const records: { seq: number; type: string; gated: boolean }[] = [];
  const skipped: { seq: number; type: string }[] = [];
  let lineage: string | null = null;
  const opts: WalDecodeOptions = {
    ...options,
    collect: false,
    onEntry: (e) => {
      if (e.kind === "lineage") lineage = e.lineageId;
      else if (e.kind === "record") records.push({ seq: e.seq, type: e.record.type, gated: e.gated });
      else skipped.push({ seq: e.seq, type: e.type });
    },
  };
  try {
    const r = await readWalFile(path, opts);
    return { file: path, status: "ok", lineage_id: r.lineageId, torn_tail: r.tornTail !== null, records, skipped, error: null };
  } catch (e) {
    const status = isWalError(e) ? STATUS[e.code] : undefined;
    if (status === undefined) throw e;
    return { file: path, status, lineage_id: lineage, torn_tail: false, records, skipped, error: (e as Error).message };
  }
}

/** A short human summary of an inspection (the non-`--json` output), several lines, no trailing newline. */
export function formatWalInspection(i: WalInspection): string {
  const gated = i.records.filter((r) => r.gated).length;
  const lines = [
    `${i.file}: ${i.status}`,
    `  lineage: ${i.lineage_id ?? "(none)"}`,
    `  records: ${i.records.length} (${gated} gated), skipped: ${i.skipped.length}${i.skipped.length ? ` (${[...new Set(i.skipped.map((s) => s.type))].join(", ")})` : ""}`,
    `  torn tail: ${i.torn_tail ? "yes" : "no"}`,
  ];
  if (i.error !== null) lines.push(`  error: ${i.error}`);
  return lines.join("\n");
}
