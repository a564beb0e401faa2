import { parseArgs } from "node:util";
import { randomBytes } from "node:crypto";
import { constants as osConstants } from "node:os";
import {
  acquireLease,
  defaultStoreUrl,
  initFleet,
  isLayoutError,
  listIntents,
  listLeases,
  listRoster,
  openStore,
  releaseLease,
  type ObjectStore,
} from "@lake/layout";
import { makeContext, requireFleet, type MaintContext } from "./internal/context.js";
import { EXIT, MaintError, exitCodeOf, isMaintError } from "./internal/errors.js";

// Operations load DuckDB or SQLite: imported when their command runs, so lease/roster/help start fast.
const DEFAULT_GC_GRACE_SECONDS = 3600;
const claimsOps = () => import("./internal/claims.js");
const compactOps = () => import("./internal/compact.js");
const gcOps = () => import("./internal/gc.js");
const sessionOps = () => import("./internal/sessions.js");
const snapshotOps = () => import("./internal/snapshot.js");
const verifyOps = () => import("./internal/verify.js");
const forgetOps = () => import("./internal/forget.js");

const HELP = `lake-maint — fleet store maintenance (init, seal, digest, compact, claims, snapshot, verify, gc, leases)

Usage: lake-maint <command> [options]

Commands:
  init        write fleet.json once (a second init refuses)
  seal        seal sessions idle past a threshold whose collector never sealed them
  digest      write digest.json for every sealed session without one
  compact     compact each (dt, fleet) partition's sealed sessions into a new generation
  propose     append a proposed claim (claims/events/…)
  promote     the claims gate: validate, dedupe, promote into claims/fleet/
  snapshot    fold promoted claims into snapshot/<sha256>.sqlite and swap latest.json
  verify      check every key, segment and marker; one line per problem
  gc          delete compacted generations no marker names, after a grace period
  lease       acquire | release | list
  roster      list
  intents     list

Every command takes --store URL (default: $LAKE_STORE, else ~/.local/share/lake/fleet, the fleet/ directory
inside the local root; lake-collector push moves a store from the old default ~/.local/share/fleet)
and --help. Read commands take --json. Ctrl-C stops seal, digest, compact and gc before their next
partition (the one in progress finishes, its lease released) and says "interrupted; N partitions
done, run again to continue". Exit codes: 0 ok, 1 problems found, 2 usage, 3 not found,
4 refused or lease lost, 5 lease held by another, 6 corrupt data, 7 I/O error, 130 interrupted.
`;

const COMMON = {
  help: { type: "boolean", short: "h" },
  store: { type: "string" },
  json: { type: "boolean" },
  "lease-ttl": { type: "string" },
} as const;

const PARTITION = { dt: { type: "string" }, fleet: { type: "string" } } as const;

interface CommandSpec {
  readonly help: string;
  readonly options: Record<string, { type: "string" | "boolean"; short?: string }>;
  /** The command takes positional arguments (forget SESSION). */
  readonly positionals?: boolean;
  readonly run: (io: CliIo, v: Record<string, string | boolean | undefined>, positionals: string[]) => Promise<number>;
}

/** Where the CLI writes: one line per call (stdout and stderr in the bin). */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

function str(v: Record<string, string | boolean | undefined>, name: string): string | undefined {
  const x = v[name];
  return typeof x === "string" ? x : undefined;
}

function need(v: Record<string, string | boolean | undefined>, name: string): string {
  const x = str(v, name);
  if (x === undefined || x === "") throw new MaintError("Usage", `--${name} is required`);
  return x;
}

function num(v: Record<string, string | boolean | undefined>, name: string, dflt: number): number {
  const x = str(v, name);
  if (x === undefined) return dflt;
  const n = Number(x);
  if (!Number.isFinite(n) || n < 0) throw new MaintError("Usage", `--${name} must be a non-negative number, got ${JSON.stringify(x)}`);
  return n;
}

function storeOf(v: Record<string, string | boolean | undefined>): ObjectStore {
  return openStore(str(v, "store") ?? defaultStoreUrl());
}

function ctxOf(store: ObjectStore, v: Record<string, string | boolean | undefined>, io: CliIo): MaintContext {
  return makeContext(store, { leaseTtlSeconds: num(v, "lease-ttl", 120) || 120, log: v.json ? () => undefined : (l) => io.err(l), shouldStop: () => signalled !== undefined });
}

/** The signal a partitioned command was asked to stop by (Ctrl-C), while it runs. */
let signalled: NodeJS.Signals | undefined;

/**
 * Run a partitioned command with SIGINT/SIGTERM trapped: the partition in progress finishes (its
 * lease released), no other starts. Then it says so (stderr) and exits 130 (143 for SIGTERM); a
 * second signal exits at once.
 */
async function stoppable(io: CliIo, fn: () => Promise<{ code: number; done: number }>): Promise<number> {
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
    io.err(`lake-maint: interrupted; ${r.done} partitions done, run again to continue`);
    return 128 + (osConstants.signals[signalled] ?? 2);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    signalled = undefined;
  }
}

function emit(io: CliIo, json: boolean, value: unknown, human: () => string[]): void {
  if (json) io.out(JSON.stringify(value));
  else for (const l of human()) io.out(l);
}

/** The lines of a text answer, or one line saying there is nothing, so a command never prints nothing. */
function orNone(lines: string[], none: string): string[] {
  return lines.length > 0 ? lines : [none];
}

/** Exit code of a partitioned operation's reports: 5 if any partition was held, 1 if any item was skipped. */
function partitionExit(reports: readonly { status: string; skipped?: readonly unknown[] }[]): number {
  if (reports.some((r) => r.status === "held")) return EXIT.held;
  if (reports.some((r) => (r.skipped?.length ?? 0) > 0)) return EXIT.problems;
  return EXIT.ok;
}

async function withStore<T>(v: Record<string, string | boolean | undefined>, fn: (store: ObjectStore) => Promise<T>): Promise<T> {
  const store = storeOf(v);
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}

const PARTITION_HELP = `  --dt yyyy-mm-dd   only this date partition
  --fleet ID        only this fleet partition`;
const COMMON_HELP = `  --store URL       fleet store (file:///dir or s3://bucket/prefix)
  --json            print one JSON object
  --lease-ttl S     TTL of the leases this run takes (default 120 s; renewed while held)`;

const COMMANDS: Record<string, CommandSpec> = {
  init: {
    help: `lake-maint init --store URL [--fleet-id ID] [--json]\n  Write fleet.json {fleet_id, created_at, schema_version: 1} by create-if-absent.\n  Exit 4 when fleet.json already exists (it is left untouched).\n${COMMON_HELP}`,
    options: { "fleet-id": { type: "string" } },
    run: (io, v) =>
      withStore(v, async (store) => {
        const id = str(v, "fleet-id") ?? `fleet-${randomBytes(6).toString("hex")}`;
        const r = await initFleet(store, id);
        if (!r.created) throw new MaintError("Refused", `fleet.json: already exists in ${store.url} (fleet_id ${r.manifest.fleet_id}); not replaced`, { key: "fleet.json", store: store.url });
        emit(io, !!v.json, r.manifest, () => [`initialised ${store.url}: fleet_id ${r.manifest.fleet_id}`]);
        return EXIT.ok;
      }),
  },
  seal: {
    help: `lake-maint seal [--idle SECONDS] [--dt D] [--fleet F] [--json]\n  Seal sessions without _SEALED whose newest segment is older than --idle (default 86400 s).\n  The collector normally seals; this is a fallback for collectors that died.\n${PARTITION_HELP}\n${COMMON_HELP}`,
    options: { idle: { type: "string" }, ...PARTITION },
    run: (io, v) =>
      stoppable(io, () => withStore(v, async (store) => {
        await requireFleet(store);
        const { runSeal } = await sessionOps();
        const r = await runSeal(ctxOf(store, v, io), num(v, "idle", 86_400), { dt: str(v, "dt"), fleet: str(v, "fleet") });
        emit(io, !!v.json, { partitions: r }, () => r.flatMap((p) => [...p.written.map((k) => `sealed ${k}`), ...p.skipped.map((s) => `skipped ${s.key}: ${s.reason}`), ...(p.status === "held" ? [`held dt=${p.dt}/fleet=${p.fleet}: lease held by ${p.held_by}`] : [])]));
        return { code: partitionExit(r), done: r.length };
      })),
  },
  digest: {
    help: `lake-maint digest [--dt D] [--fleet F] [--json]\n  Write digest.json (create-only) for each sealed session without one.\n${PARTITION_HELP}\n${COMMON_HELP}`,
    options: { ...PARTITION },
    run: (io, v) =>
      stoppable(io, () => withStore(v, async (store) => {
        await requireFleet(store);
        const { runDigest } = await sessionOps();
        const r = await runDigest(ctxOf(store, v, io), { dt: str(v, "dt"), fleet: str(v, "fleet") });
        emit(io, !!v.json, { partitions: r }, () => r.flatMap((p) => [...p.written.map((k) => `wrote ${k}`), ...p.skipped.map((s) => `skipped ${s.key}: ${s.reason}`), ...(p.status === "held" ? [`held dt=${p.dt}/fleet=${p.fleet}: lease held by ${p.held_by}`] : [])]));
        return { code: partitionExit(r), done: r.length };
      })),
  },
  compact: {
    help: `lake-maint compact [--dt D] [--fleet F] [--part-rows N] [--zstd-level N] [--json]\n  Compact each (dt, fleet) partition's sealed sessions into gen=<hash>/part-*.parquet and its usage rollup\n  (gen=<hash>/usage.json, usage.keys), then swap _COMPACTED.\n  A partition whose marker already names its sealed-session set is left alone.\n${PARTITION_HELP}\n  --part-rows N     rows per part file (default 1000000)\n  --zstd-level N    zstd level of the parts, 1-22 (default 3; 16+ is ~15% smaller and 10-20x slower)\n${COMMON_HELP}`,
    options: { ...PARTITION, "part-rows": { type: "string" }, "zstd-level": { type: "string" } },
    run: (io, v) =>
      stoppable(io, () => withStore(v, async (store) => {
        await requireFleet(store);
        const partRows = num(v, "part-rows", 1_000_000);
        if (!Number.isInteger(partRows) || partRows < 1) throw new MaintError("Usage", `--part-rows must be a positive integer`);
        const { runCompact } = await compactOps();
        const level = str(v, "zstd-level");
        if (level !== undefined && !(/^\d+$/.test(level) && Number(level) >= 1 && Number(level) <= 22)) throw new MaintError("Usage", `--zstd-level must be an integer 1-22, got ${JSON.stringify(level)}`);
        const r = await runCompact(ctxOf(store, v, io), { dt: str(v, "dt"), fleet: str(v, "fleet"), partRows, ...(level !== undefined ? { zstdLevel: Number(level) } : {}) });
        emit(io, !!v.json, { partitions: r }, () =>
          r.flatMap((p) => [
            p.status === "compacted"
              ? `compacted dt=${p.dt}/fleet=${p.fleet}: gen ${p.gen} (${p.rows} rows from ${p.source_rows}, ${p.parts} parts, epoch ${p.epoch})`
              : p.status === "held"
                ? `held dt=${p.dt}/fleet=${p.fleet}: lease held by ${p.held_by}`
                : `${p.status} dt=${p.dt}/fleet=${p.fleet}${p.gen ? `: gen ${p.gen}` : ""}`,
            ...p.skipped.map((s) => `skipped ${s.key}: ${s.reason}`),
          ]),
        );
        return { code: partitionExit(r), done: r.length };
      })),
  },
  propose: {
    help: `lake-maint propose --agent ID --text TEXT [--subject S] [--repo R] [--kind K] [--claim-id ID] [--root DIR] [--json]\n  Append a proposed claim to claims/events/dt=<today>/agent=<ID>/<ulid>.json.\n  Secrets in the text, subject and repo are masked before anything is written\n  ([REDACTED:<rule>:<hash>], keyed by DIR/redact.key; --root defaults to $LAKE_ROOT, else the local root).\n${COMMON_HELP}`,
    options: { agent: { type: "string" }, text: { type: "string" }, subject: { type: "string" }, repo: { type: "string" }, kind: { type: "string" }, "claim-id": { type: "string" }, root: { type: "string" } },
    run: (io, v) =>
      withStore(v, async (store) => {
        const claimId = str(v, "claim-id");
        const [{ proposeClaim }, { redactText, loadOrCreateKey }, { defaultLocalRoot }] = await Promise.all([claimsOps(), import("@lake/redact"), import("@lake/layout/store")]);
        const masked = redactText(() => loadOrCreateKey(str(v, "root") ?? defaultLocalRoot()), { text: need(v, "text"), subject: str(v, "subject") ?? "", repo: str(v, "repo") ?? "" });
        const r = await proposeClaim(store, {
          agent: need(v, "agent"),
          ...masked.value,
          kind: str(v, "kind") ?? "fact",
          ...(claimId !== undefined ? { claim_id: claimId } : {}),
        });
        emit(io, !!v.json, { ...r, masked: masked.findings.map((f) => ({ rule: f.rule, hash: f.hash, field: f.path[0] })) }, () => [`proposed ${r.key}${masked.findings.length ? ` (${masked.findings.length} secret${masked.findings.length === 1 ? "" : "s"} masked: ${masked.rules.join(", ")})` : ""}`]);
        return EXIT.ok;
      }),
  },
  promote: {
    help: `lake-maint promote [--json]\n  The claims gate (lease claims/promote): validate proposals, dedupe, apply the conflict rules, write claims/fleet/<claim_id>.json.\n${COMMON_HELP}`,
    options: {},
    run: (io, v) =>
      withStore(v, async (store) => {
        await requireFleet(store);
        const { runPromote } = await claimsOps();
        const r = await runPromote(ctxOf(store, v, io));
        emit(io, !!v.json, r, () =>
          r.status === "held"
            ? [`held claims/promote: lease held by ${r.held_by}`]
            : [
                ...r.promoted.map((id) => `promoted ${id}`),
                ...r.revised.map((id) => `revised ${id}`),
                ...r.rejected.map((x) => `rejected ${x.key}: ${x.reason}`),
                ...r.conflicts.map((x) => `conflict ${x.key}: ${x.reason}`),
                `${r.events} events, ${r.promoted.length} promoted, ${r.revised.length} revised, ${r.duplicates} duplicates, ${r.rejected.length} rejected, ${r.conflicts.length} conflicts`,
              ],
        );
        return r.status === "held" ? EXIT.held : EXIT.ok;
      }),
  },
  snapshot: {
    help: `lake-maint snapshot [--json]\n  Fold claims/fleet/ into a SQLite file, publish snapshot/<sha256>.sqlite, CAS-swap snapshot/latest.json.\n  An unchanged fold publishes nothing.\n${COMMON_HELP}`,
    options: {},
    run: (io, v) =>
      withStore(v, async (store) => {
        await requireFleet(store);
        const { runSnapshot } = await snapshotOps();
        const r = await runSnapshot(ctxOf(store, v, io));
        emit(io, !!v.json, r, () => [r.status === "held" ? `held snapshot: lease held by ${r.held_by}` : `${r.status} snapshot/${r.content_hash}.sqlite (${r.claims} claims)`]);
        return r.status === "held" ? EXIT.held : EXIT.ok;
      }),
  },
  verify: {
    help: `lake-maint verify [--json]\n  Check every key against the layout, read every segment and part, check _SEALED, _COMPACTED, digests,\n  claims and the snapshot pointer. Prints one line per problem ("<key>: <problem>"); exit 1 when any.\n${COMMON_HELP}`,
    options: {},
    run: (io, v) =>
      withStore(v, async (store) => {
        const { runVerify } = await verifyOps();
        const r = await runVerify(store);
        emit(io, !!v.json, r, () => [...r.problems.map((p) => `${p.key}: ${p.problem}`), ...(r.problems.length === 0 ? [`ok: ${r.keys} keys, ${r.sessions} sessions, ${r.segments} segments, ${r.compacted_partitions} compacted partitions`] : [])]);
        return r.problems.length === 0 ? EXIT.ok : EXIT.problems;
      }),
  },
  gc: {
    help: `lake-maint gc [--grace SECONDS] [--dt D] [--fleet F] [--json]\n  Delete the part files and usage rollups of compacted generations no _COMPACTED names, once they and the\n  marker's last swap are older than --grace (default ${DEFAULT_GC_GRACE_SECONDS} s).\n  Never touches bronze or the live generation.\n${PARTITION_HELP}\n${COMMON_HELP}`,
    options: { grace: { type: "string" }, ...PARTITION },
    run: (io, v) =>
      stoppable(io, () => withStore(v, async (store) => {
        await requireFleet(store);
        const { runGc } = await gcOps();
        const r = await runGc(ctxOf(store, v, io), num(v, "grace", DEFAULT_GC_GRACE_SECONDS), { dt: str(v, "dt"), fleet: str(v, "fleet") });
        emit(io, !!v.json, { partitions: r }, () => orNone(r.flatMap((p) => [...p.deleted.map((k) => `deleted ${k}`), ...(p.status === "held" ? [`held dt=${p.dt}/fleet=${p.fleet}: lease held by ${p.held_by}`] : [])]), "gc: nothing deleted"));
        return { code: partitionExit(r), done: r.length };
      })),
  },
  forget: {
    help: `lake-maint forget SESSION [--apply] [--grace SECONDS] [--json]\n  Remove a session from the fleet. Without --apply, lists what would go. With --apply, in this order: the\n  tombstone tombstones/SESSION.json (a collector's push of the session is refused from then on); every\n  bronze object of session=SESSION and session=SESSION.N (segments, _SEALED, digest.json) and its quarantine\n  objects; every compacted partition whose _COMPACTED cites it compacted again without it (a partition left\n  empty loses its marker), then the old generations (parts, usage rollups) gc'd once older than --grace\n  (default ${DEFAULT_GC_GRACE_SECONDS} s); claims citing it deleted and the snapshot published again, older\n  blobs deleted after --grace. Prints every key removed. Run it again to finish a stopped run.\n${COMMON_HELP}`,
    options: { apply: { type: "boolean" }, grace: { type: "string" } },
    positionals: true,
    run: (io, v, positionals) =>
      withStore(v, async (store) => {
        const id = positionals[0];
        if (id === undefined || positionals.length !== 1) throw new MaintError("Usage", "forget: expected one SESSION id");
        await requireFleet(store);
        const { runForget } = await forgetOps();
        const r = await runForget(ctxOf(store, v, io), id, { apply: !!v.apply, graceSeconds: num(v, "grace", DEFAULT_GC_GRACE_SECONDS) });
        emit(io, !!v.json, r, () => {
          const verb = r.apply ? "deleted" : "would delete";
          return [
            ...(r.apply ? [`${r.tombstone.written ? "wrote" : "kept"} ${r.tombstone.key}`] : [`would write ${r.tombstone.key}`]),
            ...r.deleted.map((k) => `${verb} ${k}`),
            ...r.recompacted.map((c) => `recompacted dt=${c.dt}/fleet=${c.fleet}: ${c.status}${c.gen ? ` gen=${c.gen}` : ""}`),
            ...r.markers_deleted.map((k) => `deleted ${k} (no session left)`),
            ...r.gc.flatMap((g) => [...g.deleted.map((k) => `deleted ${k}`), ...g.kept.map((k) => `kept ${k} (younger than --grace; run forget or gc again after it)`)]),
            ...r.claims.map((k) => `${verb} ${k}`),
            ...(r.snapshot ? [...r.snapshot.old_blobs_deleted.map((k) => `deleted ${k}`), ...r.snapshot.old_blobs_kept.map((k) => `kept ${k} (younger than --grace)`)] : []),
            `${r.session}: ${r.apply ? "forgotten in" : "preview for"} ${store.url}${r.apply ? "" : " (nothing changed; --apply removes)"}`,
          ];
        });
        return EXIT.ok;
      }),
  },
  "lease acquire": {
    help: `lake-maint lease acquire --store URL --repo R --resource X --owner O --ttl SECONDS [--json]\n  Prints {"acquired", "epoch", "owner", "expires_at"}. Exit 0 when acquired, 5 when held by another.\n${COMMON_HELP}`,
    options: { repo: { type: "string" }, resource: { type: "string" }, owner: { type: "string" }, ttl: { type: "string" } },
    run: (io, v) =>
      withStore(v, async (store) => {
        const ttl = num(v, "ttl", Number.NaN);
        if (!Number.isFinite(ttl) || ttl <= 0) throw new MaintError("Usage", "--ttl SECONDS is required and must be positive");
        const r = await acquireLease(store, { repo: need(v, "repo"), resource: need(v, "resource"), owner: need(v, "owner"), ttlSeconds: ttl });
        emit(io, !!v.json, r, () => [r.acquired ? `acquired epoch ${r.epoch} until ${r.expires_at}` : `held by ${r.owner} (epoch ${r.epoch}) until ${r.expires_at}`]);
        return r.acquired ? EXIT.ok : EXIT.held;
      }),
  },
  "lease release": {
    help: `lake-maint lease release --store URL --repo R --resource X --owner O [--epoch N] [--json]\n  Prints {"released", "epoch", "owner", "expires_at"}. Exit 0 when released, 5 when O does not hold it.\n${COMMON_HELP}`,
    options: { repo: { type: "string" }, resource: { type: "string" }, owner: { type: "string" }, epoch: { type: "string" } },
    run: (io, v) =>
      withStore(v, async (store) => {
        const e = str(v, "epoch");
        if (e !== undefined && !/^\d+$/.test(e)) throw new MaintError("Usage", `--epoch must be an integer, got ${JSON.stringify(e)}`);
        const r = await releaseLease(store, { repo: need(v, "repo"), resource: need(v, "resource"), owner: need(v, "owner"), ...(e !== undefined ? { epoch: Number(e) } : {}) });
        emit(io, !!v.json, r, () => [r.released ? `released epoch ${r.epoch}` : `not released: held by ${r.owner || "nobody"} (epoch ${r.epoch})`]);
        return r.released ? EXIT.ok : EXIT.held;
      }),
  },
  "lease list": {
    help: `lake-maint lease list --store URL [--all] [--json]\n  Leases that are held and live (--all: every lease object), as a JSON array with --json.\n${COMMON_HELP}`,
    options: { all: { type: "boolean" } },
    run: (io, v) =>
      withStore(v, async (store) => {
        const r = await listLeases(store, { liveOnly: !v.all });
        emit(io, !!v.json, r, () => orNone(r.map((l) => `${l.resource_key} ${l.repo} ${l.resource} ${l.status} ${l.owner} epoch=${l.epoch} expires=${l.expires_at}${l.live ? "" : " (expired)"}`), v.all ? "no leases" : "no leases held"));
        return EXIT.ok;
      }),
  },
  "roster list": {
    help: `lake-maint roster list --store URL [--all] [--json]\n  Agents with a live heartbeat (--all: expired ones too), as a JSON array with --json.\n${COMMON_HELP}`,
    options: { all: { type: "boolean" } },
    run: (io, v) =>
      withStore(v, async (store) => {
        const r = await listRoster(store, { includeExpired: !!v.all });
        emit(io, !!v.json, r, () => orNone(r.map((a) => `${a.agent_id} ${a.runtime} ${a.repo} ${a.branch} ${a.tool || "-"} expires=${a.expires_at}${a.live ? "" : " (expired)"}`), v.all ? "no agents in the roster" : "no live agents"));
        return EXIT.ok;
      }),
  },
  "intents list": {
    help: `lake-maint intents list --store URL [--all] [--json]\n  Live intent declarations (--all: expired ones too), as a JSON array with --json.\n${COMMON_HELP}`,
    options: { all: { type: "boolean" } },
    run: (io, v) =>
      withStore(v, async (store) => {
        const r = await listIntents(store, { includeExpired: !!v.all });
        emit(io, !!v.json, r, () => orNone(r.flatMap((a) => a.intents.map((i) => `${a.agent_id} ${i.repo} ${i.resource} expires=${a.expires_at}${a.live ? "" : " (expired)"}`)), v.all ? "no intents" : "no intents declared"));
        return EXIT.ok;
      }),
  },
};

const GROUPS = new Set(["lease", "roster", "intents"]);

/** One-line message and exit code of any error. */
export function describeError(e: unknown): { message: string; code: number } {
  if (isMaintError(e)) return { message: e.message, code: exitCodeOf(e.code) };
  if (isLayoutError(e)) {
    const code =
      e.code === "InvalidUrl" || e.code === "InvalidKey" ? EXIT.usage
      : e.code === "NotFound" ? EXIT.notFound
      : e.code === "Corrupt" || e.code === "HashMismatch" ? EXIT.corrupt
      : e.code === "Conflict" || e.code === "PreconditionFailed" || e.code === "NotHolder" ? EXIT.refused
      : e.code === "Locked" ? EXIT.held
      : EXIT.io;
    return { message: e.message, code };
  }
  if (e instanceof Error && e.name === "SegmentError") return { message: e.message, code: EXIT.corrupt };
  return { message: e instanceof Error ? e.message : String(e), code: EXIT.io };
}

/** Run the CLI with the given arguments; resolves to the process exit code. */
export async function main(argv: readonly string[], io: CliIo = { out: (l) => process.stdout.write(l + "\n"), err: (l) => process.stderr.write(l + "\n") }): Promise<number> {
  const args = [...argv];
  const first = args[0];
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    io.out(HELP.trimEnd());
    return EXIT.ok;
  }
  let name = first;
  let rest = args.slice(1);
  if (GROUPS.has(first)) {
    const sub = args[1];
    if (sub === undefined || sub.startsWith("-")) {
      const subs = Object.keys(COMMANDS).filter((k) => k.startsWith(first + " "));
      if (sub === "--help" || sub === "-h") {
        io.out(subs.map((s) => COMMANDS[s]!.help.split("\n")[0]).join("\n"));
        return EXIT.ok;
      }
      io.err(`lake-maint: ${first} needs a subcommand: ${subs.map((s) => s.split(" ")[1]).join(", ")}`);
      return EXIT.usage;
    }
    name = `${first} ${sub}`;
    rest = args.slice(2);
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    io.err(`lake-maint: unknown command: ${name} (see lake-maint --help)`);
    return EXIT.usage;
  }
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    const parsed = parseArgs({ args: rest, options: { ...COMMON, ...cmd.options }, allowPositionals: true, strict: true });
    values = parsed.values as Record<string, string | boolean | undefined>;
    positionals = parsed.positionals;
  } catch (e) {
    io.err(`lake-maint ${name}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`);
    return EXIT.usage;
  }
  if (values.help) {
    io.out(cmd.help);
    return EXIT.ok;
  }
  if (positionals.length > 0 && !cmd.positionals) {
    io.err(`lake-maint ${name}: unexpected argument ${JSON.stringify(positionals[0])}`);
    return EXIT.usage;
  }
  try {
    return await cmd.run(io, values, positionals);
  } catch (e) {
    const d = describeError(e);
    io.err(`lake-maint ${name}: ${d.message.split("\n")[0]}`);
    return d.code;
  }
}
