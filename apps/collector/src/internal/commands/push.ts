import { defaultStoreUrl, legacyDefaultStorePath, openStore, readConfig } from "@lake/layout/store";
import { localRoot } from "../local-root.js";
import { push, readPushState, writePushState } from "../push.js";
import { finishPending } from "../pending.js";
import { acquireLock } from "@lake/store/lock";
import { dirname, join } from "node:path";
import { existsSync, mkdirSync } from "node:fs";
import { moveDir } from "@lake/durable";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CollectorError } from "../errors.js";
import { exitCodeOf, interruptedLine, trapInterrupts } from "../interrupt.js";
import { defineCommand, flag, jsonLine, seconds, text, values as valuesOf, type Io, type RunContext } from "@lake/cli";
import { otlpMetricsUrl, parseHeader } from "../otlp-export.js";
import { resolveStore, storeOption } from "@lake/cli/store";
import { ROOT, JSON_FLAG, requireRoot, resolveRoot, resolveAgent } from "../options.js";

const DESCRIPTION = `For every session with landed files the store has not been sent, the new records become one
Parquet segment (DuckDB, ZSTD) per runtime under the next
sessions/dt=<day>/fleet=<fleet>/runtime=<runtime>/agent=<agent>/session=<id>/seg-NNNNNN.parquet,
created only if absent (a segment is never rewritten). push.state in the root records each file's
digest per store, so a re-push sends nothing twice, and each session's index watermark, so a push
finds what is new from push.state and one small file per session, asking the store nothing when
nothing is. A session is sealed (_SEALED) once all of it
is sent and its sources are gone or it landed nothing for --seal-idle seconds (default 21600, 6 h);
new records of a sealed session go to a new session directory (session=<id>.2, …), whoever sealed it:
before sending to a session's current directory, push checks its _SEALED in the store (one HEAD,
only for sessions with something new), so a lake-maint seal is honoured too. Quarantined
records become quarantine/<agent>/<date>/<ulid>.json. The roster heartbeat is refreshed.

--store URL: file:///abs/dir or s3://bucket/prefix (default $LAKE_STORE, else the fleet/ directory
inside the default local root: $XDG_DATA_HOME/lake/fleet, else ~/.local/share/lake/fleet).
A store at the old default, fleet/ beside the local root (~/.local/share/fleet), is moved there by
the first push that uses the default (push.state follows); to keep it where it is, pass
--store file://<that dir> or set LAKE_STORE. S3 uses the AWS SDK's default chain and
AWS_ENDPOINT_URL_S3 (path-style).
--agent ID: this machine's agent id (default $LAKE_AGENT, else the host name).
--fleet-id ID: the fleet id written to fleet.json when the store has none yet.

--otlp-endpoint URL also exports metrics over OTLP/HTTP (protobuf): first every landed file not derived
yet is derived (a receipt under <root>/<session>/metrics/, then _metrics/metrics-<session>-<seq>-local.pb),
then every spool file — received (watch --otlp-listen) and derived — that this endpoint has not answered
is sent, one request each, with lake.export.id=<agent>/<file> on its resources; push.state's
otlp_receivers records per endpoint what it accepted and rejected, after each file. A base URL
(http://host:4318) gets /v1/metrics. --otlp-header KEY=VALUE (repeatable) adds a request header
(e.g. authorization). A 4xx other than 408/429 is a rejection, recorded and never sent again; a 5xx,
408, 429 or network error stops the export (exit 5: run again). A crash after the receiver's 200 and
before push.state is saved re-sends that file: a lake receiver spools an export id once.
--metrics-only does only that: no fleet store is opened.

Ctrl-C (SIGINT, or SIGTERM) stops the push before its next session (push.state is saved then;
while sending, at most every second and before a seal), releases the push lock, prints
"interrupted; N sessions done, run again to continue" and
exits 130 (143 for SIGTERM); the next push sends the rest, nothing twice.

Exit codes: 0 done · 3 completed with problems: a metrics request the endpoint rejected, a session
whose metrics could not be derived, a session whose local data is damaged (a landed
file or index that does not read or check; named on stderr, one line each) or, with something to
send, that the store has a tombstone for was not sent, the rest were · 4 another push holds the root · 5 store error (outcome unknown: run again) · 7 the root does not
exist (nothing is created) or the disk refused · 2 usage · 130 interrupted.`;

const OPTIONS = { root: ROOT, store: storeOption(), agent: text("ID", "this machine's agent id (default $LAKE_AGENT, else the host name)"), "seal-idle": seconds("seal a session idle this long (default 21600 s, 6 h)", { default: 21_600 }), "fleet-id": text("ID", "the fleet id written to fleet.json when the store has none yet"), "otlp-endpoint": text("URL", "also export the metrics spool to this OTLP/HTTP receiver (a base URL gets /v1/metrics)"), "otlp-header": valuesOf("KEY=VALUE", "a header for --otlp-endpoint requests (repeatable)", parseHeader), "metrics-only": flag("only derive and export metrics to --otlp-endpoint; send nothing to the fleet store"), json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const root = resolveRoot(values.root);
  const sealIdle = values["seal-idle"];
  // Nothing was ever collected there: say so (a typo in --root is the usual cause), create nothing.
  requireRoot(root);
  // Not `recursive`: on a read-only root Node reports a recursive mkdir's EROFS as ENOENT.
  try {
    mkdirSync(join(root, "_export"));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const otlpEndpoint = values["otlp-endpoint"] === undefined ? undefined : otlpMetricsUrl(values["otlp-endpoint"]);
  const metricsOnly = Boolean(values["metrics-only"]);
  if (metricsOnly && otlpEndpoint === undefined) throw new CollectorError("Usage", "--metrics-only needs --otlp-endpoint URL");
  // Only the built-in default store moved: not one named by --store, LAKE_STORE or the config file
  // (an s3:// one there is no place on disk; a file one at the old place is where the user wants it).
  if (!metricsOnly && values.store === undefined && !process.env.LAKE_STORE && readConfig().store === undefined) moveLegacyStore(root, io);
  const store = metricsOnly ? undefined : openStore(resolveStore(values.store, io.env));
  const lock = await acquireLock(join(root, "_export"), { waitMs: 0 }).catch((e: unknown) => {
    if ((e as { code?: unknown }).code !== "Locked") throw e;
    throw new CollectorError("Locked", `${join(root, "_export", ".lock")}: another push holds this root (${(e as Error).message})`);
  });
  const traps = trapInterrupts();
  try {
    await finishPending(root, { holdsExportLock: true });
    const agent = resolveAgent(values.agent);
    const s = store
      ? await push(localRoot(root), store, {
          agent,
          sealIdleSeconds: sealIdle,
          ...(values["fleet-id"] ? { fleetId: values["fleet-id"] } : {}),
          shouldStop: () => traps.signal() !== undefined,
        })
      : undefined;
    for (const p of s?.problems ?? []) io.err(`lake-collector push: ${p.reason}; session ${p.session} not sent (the others were)\n`);
    for (const id of s?.refused ?? []) io.err(`lake-collector: ${s!.store}/tombstones/${id}.json: session ${id} was forgotten in this fleet; not sent (lake-collector forget ${id} --apply removes it here too)\n`);
    let otlp: import("../otlp-export.js").OtlpExportSummary | undefined;
    if (otlpEndpoint !== undefined && !s?.interrupted) {
      const { exportMetrics } = await import("../otlp-export.js");
      otlp = await exportMetrics(root, { endpoint: otlpEndpoint, headers: Object.fromEntries(values["otlp-header"] ?? []), agent, shouldStop: () => traps.signal() !== undefined });
      for (const p of otlp.problems) io.err(`lake-collector push: ${p}\n`);
    }
    if (values.json) io.out(jsonLine(s ? (otlp ? { ...s, otlp } : s) : { otlp }));
    else {
      if (s) io.out(`${s.store}: ${s.sessions} sessions sent, ${s.segments} segments (${s.rows} rows, ${(s.bytes / 1e6).toFixed(2)} MB), ${s.sealed} sealed, ${s.quarantined} quarantined${s.learned ? `, ${s.learned} continued in a new part (sealed in the store)` : ""}${s.recovered ? `, ${s.recovered} segments recovered from an interrupted push` : ""}\n`);
      if (otlp) io.out(`${otlp.endpoint}: ${otlp.derived} landed files derived, ${otlp.sent} metrics requests sent (${otlp.accepted_points} points accepted), ${otlp.rejected} rejected${otlp.empty ? `, ${otlp.empty} without points` : ""}\n`);
    }
    const sig = traps.signal();
    if ((s?.interrupted || otlp?.interrupted) && sig) {
      io.err(`lake-collector: ${interruptedLine(s?.sessions ?? 0, "sessions")}\n`);
      return exitCodeOf(sig);
    }
    if (otlp && (otlp.problems.length > 0 || otlp.rejected > 0)) return 3;
    return s && (s.refused.length > 0 || s.problems.length > 0) ? 3 : 0;
  } finally {
    traps.release();
    lock.release();
    store?.close();
  }
}

/**
 * The default store moved from fleet/ beside the local root into it: move a store found at the old
 * place (one rename; push.state's record of it follows) when the new place is still free.
 */
function moveLegacyStore(root: string, io: Io): void {
  const legacy = legacyDefaultStorePath();
  const target = fileURLToPath(defaultStoreUrl());
  if (!existsSync(join(legacy, "fleet.json"))) return;
  const left = `lake-collector: ${legacy}: a fleet store at the old default place; the default is now ${target} (move it there, or pass --store ${pathToFileURL(legacy).href})\n`;
  if (existsSync(target)) {
    io.err(left);
    return;
  }
  mkdirSync(dirname(target), { recursive: true });
  let moved: boolean;
  try {
    moved = moveDir(legacy, target); // one rename, never over a store that appeared meanwhile
  } catch (e) {
    throw new CollectorError("Store", `${legacy}: cannot move the fleet store to its new default place ${target} (${(e as Error).message}); move it by hand, or pass --store ${pathToFileURL(legacy).href}`);
  }
  if (!moved) {
    io.err(left); // a store appeared at the new place meanwhile
    return;
  }
  const state = readPushState(root);
  const from = pathToFileURL(legacy).href;
  const recv = state.receivers[from];
  if (recv) {
    state.receivers[pathToFileURL(target).href] = recv;
    delete state.receivers[from];
    writePushState(root, state);
  }
  io.err(`lake-collector: moved the fleet store from ${legacy} to ${target} (its new default place)\n`);
}

/** `lake-collector push`. */
export const command = defineCommand({
  summary: "send new landed records to the fleet store",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});
