// The maintenance steps `run` chains and the single commands print: each step's operation, its text
// lines (with one line saying why when it did nothing) and its exit code.
import type { MaintContext } from "../context.js";
import type { CompactReport } from "../compact.js";
import type { GcReport } from "../gc.js";
import type { DigestRun, SealRun } from "../sessions.js";
import { EXIT } from "../errors.js";
import { heldLine, partitionExit } from "./shared.js";

/** What one step did: the value `--json` prints, its text lines, its exit code, and partitions done. */
export interface StepResult {
  readonly code: number;
  readonly value: unknown;
  readonly lines: string[];
  readonly done: number;
}

/** The partition filter as the text lines say it ("" for none). */
function scope(filter: { readonly dt?: string | undefined; readonly fleet?: string | undefined }): string {
  const parts = [filter.dt !== undefined ? `dt=${filter.dt}` : "", filter.fleet !== undefined ? `fleet=${filter.fleet}` : ""].filter((s) => s !== "");
  return parts.length > 0 ? ` matching ${parts.join("/")}` : "";
}

/** Seconds as the lines say them: 86400 → "24 h", 900 → "15 min", 90 → "90 s". */
export function duration(s: number): string {
  if (s >= 3600 && s % 3600 === 0) return `${s / 3600} h`;
  if (s >= 60 && s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The options of the session steps. */
export interface StepFilter {
  readonly dt?: string | undefined;
  readonly fleet?: string | undefined;
}

/** `seal`: its lines, and why nothing was sealed. */
export async function sealStep(ctx: MaintContext, idleSeconds: number, filter: StepFilter): Promise<StepResult> {
  const { runSeal } = await import("../sessions.js");
  const r = await runSeal(ctx, idleSeconds, filter);
  const lines = r.partitions.flatMap((p) => [...p.written.map((k) => `sealed ${k}`), ...p.skipped.map((s) => `skipped ${s.key}: ${s.reason}`), ...heldLine(p)]);
  if (lines.length === 0) lines.push(`seal: nothing to seal: ${sealWhy(r, filter)}`);
  return { code: partitionExit(r.partitions), value: r, lines, done: r.partitions.length };
}

function sealWhy(r: SealRun, filter: StepFilter): string {
  if (r.sessions === 0) return `no sessions in the store${scope(filter)}`;
  const why: string[] = [];
  if (r.not_idle > 0) why.push(`${plural(r.not_idle, "session")} not idle for ${duration(r.idle_seconds)} yet (--idle to change)`);
  if (r.already_sealed > 0) why.push(`${r.already_sealed === r.sessions ? "all " : ""}${plural(r.already_sealed, "session")} sealed already`);
  const empty = r.sessions - r.not_idle - r.already_sealed;
  if (empty > 0) why.push(`${plural(empty, "session")} without segments`);
  return why.join("; ");
}

/** `digest`: its lines, and why nothing was written. */
export async function digestStep(ctx: MaintContext, filter: StepFilter): Promise<StepResult> {
  const { runDigest } = await import("../sessions.js");
  const r = await runDigest(ctx, filter);
  const lines = r.partitions.flatMap((p) => [...p.written.map((k) => `wrote ${k}`), ...p.skipped.map((s) => `skipped ${s.key}: ${s.reason}`), ...heldLine(p)]);
  if (lines.length === 0) lines.push(`digest: nothing to write: ${digestWhy(r, filter)}`);
  return { code: partitionExit(r.partitions), value: r, lines, done: r.partitions.length };
}

function digestWhy(r: DigestRun, filter: StepFilter): string {
  if (r.sessions === 0) return `no sessions in the store${scope(filter)}`;
  const why: string[] = [];
  if (r.with_digest > 0) why.push(`${r.with_digest === r.sessions ? "all " : ""}${plural(r.with_digest, "sealed session")} ${r.with_digest === 1 ? "has" : "have"} digest.json already`);
  if (r.unsealed > 0) why.push(`${plural(r.unsealed, "session")} not sealed yet (a digest waits for the seal)`);
  return why.join("; ");
}

/** `compact`: one line per partition, and why nothing was compacted. */
export async function compactStep(ctx: MaintContext, options: StepFilter & { partRows: number; zstdLevel?: number | undefined; memoryLimitMb?: number | undefined; threads?: number | undefined }): Promise<StepResult> {
  const { runCompact } = await import("../compact.js");
  const r = await runCompact(ctx, { dt: options.dt, fleet: options.fleet, partRows: options.partRows, ...(options.zstdLevel !== undefined ? { zstdLevel: options.zstdLevel } : {}), memoryLimitMb: options.memoryLimitMb, threads: options.threads });
  const lines = r.flatMap((p) => [
    // skipped (a damaged marker): its `skipped` line says why.
    ...(p.status === "skipped" ? [] : [statusLine(p)]),
    ...p.skipped.map((s) => `skipped ${s.key}: ${s.reason}`),
    ...(p.late ?? []).map((k) => `late ${k}: past its session's _SEALED count, compacted with the session`),
  ]);
  if (!r.some((p) => p.status === "compacted" || p.status === "held" || p.skipped.length > 0)) lines.push(`compact: nothing to compact: ${compactWhy(r, options)}`);
  return { code: partitionExit(r), value: { partitions: r }, lines, done: r.length };
}

function statusLine(p: CompactReport): string {
  return p.status === "compacted"
      ? `compacted dt=${p.dt}/fleet=${p.fleet}: gen ${p.gen} (${p.rows} rows from ${p.source_rows}, ${p.parts} parts, epoch ${p.epoch})`
      : p.status === "held"
        ? `held dt=${p.dt}/fleet=${p.fleet}: lease held by ${p.held_by}`
        : p.status === "unchanged"
          ? `unchanged dt=${p.dt}/fleet=${p.fleet}: gen ${p.gen} is current (_COMPACTED names this set of sealed sessions)`
          : `empty dt=${p.dt}/fleet=${p.fleet}: no sealed session yet${p.unsealed ? ` (${plural(p.unsealed, "session")} not sealed)` : ""}`;
}

function compactWhy(r: readonly CompactReport[], filter: StepFilter): string {
  if (r.length === 0) return `no sessions in the store${scope(filter)}`;
  const current = r.filter((p) => p.status === "unchanged").length;
  const empty = r.filter((p) => p.status === "empty").length;
  if (empty === 0) return `all ${plural(current, "partition")} current`;
  return [current > 0 ? `${plural(current, "partition")} current` : "", `${plural(empty, "partition")} with no sealed session yet (seal first)`].filter((s) => s !== "").join("; ");
}

/** `promote`: the gate's decisions, and a summary line (saying so when there was nothing to promote). */
export async function promoteStep(ctx: MaintContext): Promise<StepResult> {
  const { runPromote } = await import("../claims.js");
  const r = await runPromote(ctx);
  const lines =
    r.status === "held"
      ? [`held claims/promote: lease held by ${r.held_by}`]
      : [
          ...r.promoted.map((id) => `promoted ${id}`),
          ...r.revised.map((id) => `revised ${id}`),
          ...r.rejected.map((x) => `rejected ${x.key}: ${x.reason}`),
          ...r.conflicts.map((x) => `conflict ${x.key}: ${x.reason}`),
          r.events === 0
            ? "promote: nothing to promote: no proposals under claims/events/"
            : `${r.events} events, ${r.promoted.length} promoted, ${r.revised.length} revised, ${r.duplicates} duplicates, ${r.rejected.length} rejected, ${r.conflicts.length} conflicts`,
        ];
  return { code: r.status === "held" ? EXIT.locked : EXIT.ok, value: r, lines, done: 1 };
}

/** `snapshot`: published, or unchanged and why. */
export async function snapshotStep(ctx: MaintContext): Promise<StepResult> {
  const { runSnapshot } = await import("../snapshot.js");
  const r = await runSnapshot(ctx);
  const line =
    r.status === "held"
      ? `held snapshot: lease held by ${r.held_by}`
      : r.status === "unchanged"
        ? `unchanged snapshot/${r.content_hash}.sqlite (${plural(r.claims ?? 0, "claim")}): the promoted claims fold to the current snapshot; nothing published`
        : `${r.status} snapshot/${r.content_hash}.sqlite (${plural(r.claims ?? 0, "claim")})`;
  return { code: r.status === "held" ? EXIT.locked : EXIT.ok, value: r, lines: [line], done: 1 };
}

/** `gc`: what it deleted, and why nothing. */
export async function gcStep(ctx: MaintContext, graceSeconds: number, filter: StepFilter): Promise<StepResult> {
  const { runGc } = await import("../gc.js");
  const r = await runGc(ctx, graceSeconds, filter);
  const lines = r.flatMap((p) => [...p.deleted.map((k) => `deleted ${k}`), ...(p.skipped ?? []).map((s) => `skipped ${s.key}: ${s.reason}`), ...heldLine(p)]);
  if (lines.length === 0) lines.push(`gc: nothing deleted: ${gcWhy(r, graceSeconds, filter)}`);
  return { code: partitionExit(r), value: { partitions: r }, lines, done: r.length };
}

function gcWhy(r: readonly GcReport[], graceSeconds: number, filter: StepFilter): string {
  if (r.length === 0) return `no compacted partitions in the store${scope(filter)}`;
  const kept = r.reduce((n, p) => n + p.kept.length, 0);
  if (kept > 0) return `${plural(kept, "file")} of old generations younger than --grace ${duration(graceSeconds)} (or the marker's last swap) kept`;
  return `no old generations (${plural(r.length, "partition")}, each only its live one)`;
}
