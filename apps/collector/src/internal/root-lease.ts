// One writer per root for `watch`: <root>/watch.lock/owner.json names the owner by host, pid,
// start time and a random token. The lease is claimed by renaming a fully prepared directory
// into place (atomic: the rename fails when watch.lock exists). A live owner means refusal; a
// dead owner on this host is removed after a liveness check; release checks the token first.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { processAlive } from "@lake/durable";
import { CollectorError } from "./errors.js";

/** The owner record of a root lease. */
export interface RootOwner {
  readonly host: string;
  readonly pid: number;
  /** When the owner process started (ms since epoch). */
  readonly started_at: number;
  readonly token: string;
}

/** A held root lease. */
export interface RootLease {
  readonly dir: string;
  readonly owner: RootOwner;
  /** Remove the lease if it is still ours (token check). */
  release(): void;
}

const processStart = Date.now() - Math.round(process.uptime() * 1000);

function readOwner(dir: string): RootOwner | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, "owner.json"), "utf8")) as RootOwner;
  } catch {
    return undefined;
  }
}

/** The owner of `<root>/<name>`, or undefined when none holds it (or its record is unreadable). */
export function rootOwner(root: string, name = "watch.lock"): RootOwner | undefined {
  return readOwner(join(root, name));
}

/** `alive`, `dead` (same host, process gone), or `unknown` (another host: never taken over). */
export function ownerLiveness(o: RootOwner): "alive" | "dead" | "unknown" {
  if (o.host !== hostname()) return "unknown";
  return Number.isInteger(o.pid) && o.pid > 0 && processAlive(o.pid) ? "alive" : "dead";
}

/** Claim the root lease `<root>/<name>`; throws CollectorError Locked naming the live owner. */
export function acquireRootLease(root: string, name = "watch.lock"): RootLease {
  mkdirSync(root, { recursive: true });
  const dir = join(root, name);
  const owner: RootOwner = { host: hostname(), pid: process.pid, started_at: processStart, token: randomBytes(16).toString("hex") };
  for (let attempt = 0; attempt < 3; attempt++) {
    const prep = join(root, `.${name}.prep-${owner.token}`);
    mkdirSync(prep);
    writeFileSync(join(prep, "owner.json"), JSON.stringify(owner) + "\n");
    try {
      renameSync(prep, dir);
      return {
        dir,
        owner,
        release() {
          const cur = readOwner(dir);
          if (cur?.token === owner.token) rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (e) {
      rmSync(prep, { recursive: true, force: true });
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw e;
    }
    const cur = readOwner(dir);
    if (cur && ownerLiveness(cur) !== "dead") {
      throw new CollectorError("Locked", `${dir}: held by pid ${cur.pid} on ${cur.host} (started ${new Date(cur.started_at).toISOString()})`);
    }
    // A dead owner (or an owner file never completed): move it aside under a unique name, and
    // only delete it when what was moved is the dead owner we checked; a live owner that slipped
    // in between is put back.
    const aside = join(root, `.${name}.dead-${owner.token}-${attempt}`);
    try {
      renameSync(dir, aside);
    } catch {
      continue;
    }
    const moved = readOwner(aside);
    if (moved && cur && moved.token !== cur.token) {
      try {
        renameSync(aside, dir);
      } catch {
        /* a third process claimed it meanwhile */
      }
      continue;
    }
    rmSync(aside, { recursive: true, force: true });
  }
  throw new CollectorError("Locked", `${dir}: could not claim the lease`);
}
