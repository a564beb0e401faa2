// One writer per root for `watch`: <root>/watch.lock/owner.json names the owner (host, pid, start
// time, token, boot id). @lake/durable's directory lease: claimed by moving a fully prepared
// directory into place (one rename, which fails when watch.lock exists); a live owner means
// refusal; an owner on this host proven dead is moved aside and removed; release checks the token.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { acquireDirLease, dirLeaseOwner, type Liveness, type LeaseOwner } from "@lake/durable";
import { CollectorError } from "./errors.js";

/** The owner of a root lease, with what this host can say about it. */
export type RootOwner = LeaseOwner & { readonly liveness: Liveness };

/** A held root lease. */
export interface RootLease {
  readonly dir: string;
  readonly owner: LeaseOwner;
  /** Remove the lease if it is still ours (token check). */
  release(): void;
}

/** The owner of `<root>/<name>`, or undefined when none holds it (or its record is unreadable). */
export function rootOwner(root: string, name = "watch.lock"): RootOwner | undefined {
  return dirLeaseOwner(join(root, name));
}

/** Claim the root lease `<root>/<name>`; throws CollectorError Locked naming the live owner. */
export function acquireRootLease(root: string, name = "watch.lock"): RootLease {
  mkdirSync(root, { recursive: true });
  const dir = join(root, name);
  const r = acquireDirLease(dir); // an I/O error is Node's, as every command's (exit 7)
  if (!r.held) {
    const o = r.owner;
    throw new CollectorError("Locked", o ? `${dir}: held by pid ${o.pid} on ${o.host} (started ${new Date(o.startedAt).toISOString()})` : `${dir}: held (its owner record is not readable yet)`);
  }
  const lease = r;
  return { dir, owner: lease.owner, release: () => lease.release() };
}
