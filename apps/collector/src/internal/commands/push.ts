import { defaultStoreUrl, legacyDefaultStorePath, openStore } from "@lake/layout";
import { localRoot } from "../local-root.js";
import { push, readPushState, writePushState } from "../push.js";
import { finishPending } from "../forget.js";
import { acquireLock } from "@lake/store";
import { dirname, join } from "node:path";
import { existsSync, mkdirSync, renameSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CollectorError } from "../errors.js";
import { parse, resolveAgent, resolveRoot } from "../options.js";
import { exitCodeOf, interruptedLine, trapInterrupts } from "../interrupt.js";

export const help = `lake-collector push — send new landed records to the fleet store

Usage: lake-collector push [--root DIR] [--store URL] [--agent ID] [--seal-idle SECONDS] [--fleet-id ID] [--json]

For every session with landed files the store has not been sent, the new records become one
Parquet segment (DuckDB, ZSTD) per runtime under the next
sessions/dt=<day>/fleet=<fleet>/runtime=<runtime>/agent=<agent>/session=<id>/seg-NNNNNN.parquet,
created only if absent (a segment is never rewritten). push.state in the root records each file's
digest per store, so a re-push sends nothing twice. A session is sealed (_SEALED) once all of it
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

Ctrl-C (SIGINT, or SIGTERM) stops the push before its next session (push.state is saved after
each), releases the push lock, prints "interrupted; N sessions done, run again to continue" and
exits 130 (143 for SIGTERM); the next push sends the rest, nothing twice.

Exit codes: 0 done · 3 completed with problems: a session whose local data is damaged (a landed
file or index that does not read or check; named on stderr, one line each) or that the store has a
tombstone for was not sent, the rest were · 4 another push holds the root · 5 store error (outcome unknown: run again) · 2 usage · 130 interrupted.
`;

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args, {
    root: { type: "string" },
    store: { type: "string" },
    agent: { type: "string" },
    "seal-idle": { type: "string" },
    "fleet-id": { type: "string" },
    json: { type: "boolean" },
  });
  const root = resolveRoot(values.root);
  const sealIdle = values["seal-idle"] === undefined ? 21600 : Number(values["seal-idle"]);
  if (!Number.isFinite(sealIdle) || sealIdle < 0) throw new CollectorError("Usage", `--seal-idle ${String(values["seal-idle"])}: expected seconds ≥ 0`);
  // Not `recursive`: on a read-only root Node reports a recursive mkdir's EROFS as ENOENT.
  try {
    mkdirSync(join(root, "_export"));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  if (values.store === undefined && !process.env.LAKE_STORE) moveLegacyStore(root);
  const store = openStore((values.store as string | undefined) ?? defaultStoreUrl());
  const lock = await acquireLock(join(root, "_export"), { waitMs: 0 }).catch((e: unknown) => {
    if ((e as { code?: unknown }).code !== "Locked") throw e;
    throw new CollectorError("Locked", `${join(root, "_export", ".lock")}: another push holds this root (${(e as Error).message})`);
  });
  const traps = trapInterrupts();
  try {
    await finishPending(root, { holdsExportLock: true });
    const s = await push(localRoot(root), store, {
      agent: resolveAgent(values.agent),
      sealIdleSeconds: sealIdle,
      ...(values["fleet-id"] ? { fleetId: values["fleet-id"] as string } : {}),
      shouldStop: () => traps.signal() !== undefined,
    });
    for (const p of s.problems) process.stderr.write(`lake-collector push: ${p.reason}; session ${p.session} not sent (the others were)\n`);
    for (const id of s.refused) process.stderr.write(`lake-collector: ${s.store}/tombstones/${id}.json: session ${id} was forgotten in this fleet; not sent (lake-collector forget ${id} --apply removes it here too)\n`);
    process.stdout.write(
      values.json
        ? JSON.stringify(s) + "\n"
        : `${s.store}: ${s.sessions} sessions sent, ${s.segments} segments (${s.rows} rows, ${(s.bytes / 1e6).toFixed(2)} MB), ${s.sealed} sealed, ${s.quarantined} quarantined${s.learned ? `, ${s.learned} continued in a new part (sealed in the store)` : ""}${s.recovered ? `, ${s.recovered} segments recovered from an interrupted push` : ""}\n`,
    );
    const sig = traps.signal();
    if (s.interrupted && sig) {
      process.stderr.write(`lake-collector: ${interruptedLine(s.sessions, "sessions")}\n`);
      return exitCodeOf(sig);
    }
    return s.refused.length > 0 || s.problems.length > 0 ? 3 : 0;
  } finally {
    traps.release();
    lock.release();
    store.close();
  }
}

/**
 * The default store moved from fleet/ beside the local root into it: move a store found at the old
 * place (one rename; push.state's record of it follows) when the new place is still free.
 */
function moveLegacyStore(root: string): void {
  const legacy = legacyDefaultStorePath();
  const target = fileURLToPath(defaultStoreUrl());
  if (!existsSync(join(legacy, "fleet.json"))) return;
  if (existsSync(target)) {
    process.stderr.write(`lake-collector: ${legacy}: a fleet store at the old default place; the default is now ${target} (move it there, or pass --store ${pathToFileURL(legacy).href})\n`);
    return;
  }
  mkdirSync(dirname(target), { recursive: true });
  try {
    renameSync(legacy, target);
  } catch (e) {
    throw new CollectorError("Store", `${legacy}: cannot move the fleet store to its new default place ${target} (${(e as Error).message}); move it by hand, or pass --store ${pathToFileURL(legacy).href}`);
  }
  const state = readPushState(root);
  const from = pathToFileURL(legacy).href;
  const recv = state.receivers[from];
  if (recv) {
    state.receivers[pathToFileURL(target).href] = recv;
    delete state.receivers[from];
    writePushState(root, state);
  }
  process.stderr.write(`lake-collector: moved the fleet store from ${legacy} to ${target} (its new default place)\n`);
}
