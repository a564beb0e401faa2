// Build real fleet stores for tests: bronze segments written by @lake/segments under the layout's
// keys with _SEALED markers from @lake/layout; compaction, claims and snapshots by the real lake-maint.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { recordDay, type CanonicalRecord } from "@lake/events";
import { encodeSealed, sessionLabel, sessionPrefix } from "@lake/layout";
import { SegmentWriter, type FleetRow } from "@lake/segments";

/** Where one session's bronze lives. */
export interface PushedSession {
  readonly dt: string;
  readonly runtime: string;
  readonly agent: string;
  readonly session: string;
  readonly dir: string;
}

/**
 * Push records as bronze: one session directory per session (dt = the UTC day of its first
 * timestamp), the rows split over `segments` seg-NNNNNN.parquet files, and _SEALED when `seal`.
 */
export async function pushBronze(
  root: string,
  records: readonly CanonicalRecord[],
  opts: { fleet?: string; agent?: string; segments?: number; seal?: boolean | ((session: string) => boolean); dt?: string; part?: number } = {},
): Promise<PushedSession[]> {
  const fleet = opts.fleet ?? "f1";
  const agent = opts.agent ?? "host-a";
  const bySession = new Map<string, CanonicalRecord[]>();
  for (const r of records) {
    let l = bySession.get(r.session_id);
    if (!l) bySession.set(r.session_id, (l = []));
    l.push(r);
  }
  const w = await SegmentWriter.open();
  const out: PushedSession[] = [];
  try {
    for (const [session, recs] of bySession) {
      const first = recs.map((r) => r.ts).filter((t): t is string => !!t).sort()[0];
      const dt = opts.dt ?? (first ? recordDay({ ts: first }) : "2026-01-01");
      const runtime = recs[0]!.runtime;
      // A session's later part (pushed after its seal) has its own directory, `<id>.<part>`.
      const label = sessionLabel(session, opts.part ?? 1);
      const dir = join(root, sessionPrefix({ dt, fleet, runtime, agent, session: label }));
      mkdirSync(dir, { recursive: true });
      const n = Math.max(1, Math.min(opts.segments ?? 1, recs.length));
      const per = Math.ceil(recs.length / n);
      for (let i = 0; i < n; i++) {
        const rows: FleetRow[] = recs.slice(i * per, (i + 1) * per).map((r, k) => ({ ...r, agent, landed_seq: i + 1, landed_row: k }));
        if (rows.length) await w.write(join(dir, `seg-${String(i).padStart(6, "0")}.parquet`), rows, "bronze");
      }
      const seal = typeof opts.seal === "function" ? opts.seal(session) : opts.seal ?? true;
      // The collector's _SEALED (lake-maint compacts only sessions whose marker matches their segments).
      if (seal) writeFileSync(join(dir, "_SEALED"), encodeSealed({ rows: recs.length, sealed_at: "2026-03-01T00:00:00.000Z", segments: n }));
      out.push({ dt, runtime, agent, session: label, dir });
    }
  } finally {
    w.close();
  }
  return out;
}

/** The real lake-maint binary (built), as the reader's tests run it. */
export const MAINT_BIN = fileURLToPath(new URL("../../../maint/bin/lake-maint.js", import.meta.url));

/** Run lake-maint with `args`; its stdout (throws with its stderr on a non-zero exit). */
export function maint(args: readonly string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync(process.execPath, [MAINT_BIN, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH, ...env } });
}

/** `lake-maint init` once (fleet `fleet`, the id pushBronze uses), then `lake-maint compact` (one dt, or all). */
export function compactWithMaint(root: string, opts: { dt?: string; fleet?: string } = {}): void {
  const store = pathToFileURL(root).href;
  if (!existsSync(join(root, "fleet.json"))) maint(["init", "--store", store, "--fleet-id", opts.fleet ?? "f1"]);
  maint(["compact", "--store", store, ...(opts.dt ? ["--dt", opts.dt] : [])]);
}

/** Propose the claims with lake-maint, promote them and publish a snapshot (the real gate and fold). */
export function snapshotWithMaint(root: string, claims: readonly { claim_id: string; agent: string; repo?: string; subject?: string; text: string; kind?: string }[], opts: { fleet?: string } = {}): void {
  const store = pathToFileURL(root).href;
  if (!existsSync(join(root, "fleet.json"))) maint(["init", "--store", store, "--fleet-id", opts.fleet ?? "f1"]);
  for (const c of claims) {
    const args = ["propose", "--store", store, "--agent", c.agent, "--text", c.text, "--claim-id", c.claim_id];
    if (c.repo !== undefined) args.push("--repo", c.repo);
    if (c.subject !== undefined) args.push("--subject", c.subject);
    if (c.kind !== undefined) args.push("--kind", c.kind);
    maint(args);
  }
  maint(["promote", "--store", store]);
  maint(["snapshot", "--store", store]);
}
