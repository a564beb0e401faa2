// What maint's commands share: the common options, opening the store, the operation context,
// Ctrl-C handling of partitioned runs, and printing (one JSON object, or text lines).
import { constants as osConstants } from "node:os";
import { flag, seconds, text, type Io } from "@lake/cli";
import { resolveStore, storeOption } from "@lake/cli/store";
import { openStore, type ObjectStore } from "@lake/layout";
import { makeContext, type MaintContext } from "../context.js";
import { EXIT } from "../errors.js";

/** The grace period of gc and forget, in seconds. */
export const DEFAULT_GC_GRACE_SECONDS = 3600;

/** Options every maint command takes. */
export const COMMON = {
  store: storeOption(),
  json: flag("print one JSON object"),
  "lease-ttl": seconds("TTL of the leases this run takes (default 120 s; renewed while held)", { default: 120, min: 1 }),
} as const;

/** The partition filters of seal, digest, compact and gc. */
export const PARTITION = {
  dt: text("yyyy-mm-dd", "only this date partition"),
  fleet: text("ID", "only this fleet partition"),
} as const;

/** The values of {@link COMMON}. */
export interface CommonValues {
  readonly store: string | undefined;
  readonly json: boolean;
  readonly "lease-ttl": number;
}

/** Write text lines to stdout. */
export function out(io: Io, lines: readonly string[]): void {
  for (const l of lines) io.out(l + "\n");
}

/** One JSON object with --json, else the text lines. */
export function emit(io: Io, json: boolean, value: unknown, human: () => string[]): void {
  if (json) io.out(JSON.stringify(value) + "\n");
  else out(io, human());
}

/** The lines of a text answer, or one line saying there is nothing, so a command never prints nothing. */
export function orNone(lines: string[], none: string): string[] {
  return lines.length > 0 ? lines : [none];
}

/** Exit code of a partitioned operation's reports: 5 if any partition was held, 1 if any item was skipped. */
export function partitionExit(reports: readonly { status: string; skipped?: readonly unknown[] }[]): number {
  if (reports.some((r) => r.status === "held")) return EXIT.locked;
  if (reports.some((r) => (r.skipped?.length ?? 0) > 0)) return EXIT.partial;
  return EXIT.ok;
}

/** Open the store of --store (else $LAKE_STORE, else the default), run `fn`, close it. */
export async function withStore<T>(v: CommonValues, io: Io, fn: (store: ObjectStore) => Promise<T>): Promise<T> {
  const store = openStore(resolveStore(v.store, io.env));
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}

/** The signal a partitioned command was asked to stop by (Ctrl-C), while it runs. */
let signalled: NodeJS.Signals | undefined;

/** The operation context of a run: its lease TTL, progress on stderr (not with --json), Ctrl-C. */
export function ctxOf(store: ObjectStore, v: CommonValues, io: Io): MaintContext {
  return makeContext(store, { leaseTtlSeconds: v["lease-ttl"], log: v.json ? () => undefined : (l) => io.err(l + "\n"), shouldStop: () => signalled !== undefined });
}

/**
 * Run a partitioned command with SIGINT/SIGTERM trapped: the partition in progress finishes (its
 * lease released), no other starts. Then it says so (stderr) and exits 130 (143 for SIGTERM); a
 * second signal exits at once.
 */
export async function stoppable(io: Io, fn: () => Promise<{ code: number; done: number }>): Promise<number> {
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled !== undefined) process.exit(128 + (osConstants.signals[sig] ?? 2));
    signalled = sig;
  };
  signalled = undefined;
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const r = await fn();
    if (signalled === undefined) return r.code;
    io.err(`lake-maint: interrupted; ${r.done} partitions done, run again to continue\n`);
    return 128 + (osConstants.signals[signalled] ?? 2);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    signalled = undefined;
  }
}

/** A held partition's line. */
export function heldLine(p: { status: string; dt: string; fleet: string; held_by?: string | undefined }): string[] {
  return p.status === "held" ? [`held dt=${p.dt}/fleet=${p.fleet}: lease held by ${p.held_by}`] : [];
}

