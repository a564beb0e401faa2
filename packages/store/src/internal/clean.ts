// clean: delete the root's derived state only — each session's index/ and every round chain —
// never a landed file, cursor, session.state, spool, push state or forget record. Each directory
// goes in one rename into _removed/ and is deleted there; an index under its session's lock.
import { lstatSync, readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { errno, ioError } from "./errors.js";
import type { StepHook } from "./fsx.js";
import { acquireLock } from "./lock.js";
import { listSessionIds } from "./scan.js";
import { CONVERSATIONS_DIR, discardDerived, treeSize } from "./removal.js";
import { PASS_STATE_FILE } from "./pass-state.js";

/** One derived directory of a root. */
export interface DerivedItem {
  /** `index`: a session's index/ (rebuilt from its landed files); `chain`: a conversation's round chain (rebuilt by parse). */
  readonly what: "index" | "chain";
  readonly session: string;
  readonly path: string;
  readonly files: number;
  readonly bytes: number;
}

function dirThere(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch (e) {
    if (errno(e) === "ENOENT") return false;
    throw ioError(p, "stat", e);
  }
}

/** Every derived directory of the root (a preview: nothing is changed). */
export function listDerived(root: string): DerivedItem[] {
  const out: DerivedItem[] = [];
  for (const id of listSessionIds(root)) {
    const p = join(root, id, "index");
    if (dirThere(p)) out.push({ what: "index", session: id, path: p, ...treeSize(p) });
  }
  const conv = join(root, CONVERSATIONS_DIR);
  let names: string[] = [];
  try {
    names = readdirSync(conv).sort();
  } catch (e) {
    if (errno(e) !== "ENOENT") throw ioError(conv, "list", e);
  }
  for (const id of names) {
    if (id.startsWith(".")) continue;
    const p = join(conv, id);
    if (dirThere(p)) out.push({ what: "chain", session: id, path: p, ...treeSize(p) });
  }
  return out;
}

/** Options of {@link cleanDerived}. */
export interface CleanOptions {
  /** How long to wait for a session's lock (ms, default 10 000). */
  readonly waitMs?: number;
  readonly onStep?: StepHook;
}

/**
 * Delete every derived directory {@link listDerived} names. A collect or parse afterwards rebuilds
 * them (a round carries no wall-clock time: the same landed files give the same round bytes).
 */
export async function cleanDerived(root: string, options: CleanOptions = {}): Promise<DerivedItem[]> {
  const items = listDerived(root);
  // pass.state says which sessions' indexes and chains are current: it goes first.
  try {
    unlinkSync(join(root, PASS_STATE_FILE));
  } catch (e) {
    if (errno(e) !== "ENOENT") throw ioError(join(root, PASS_STATE_FILE), "remove", e);
  }
  for (const it of items) {
    if (it.what === "index") {
      const lock = await acquireLock(join(root, it.session), { waitMs: options.waitMs ?? 10_000 });
      try {
        discardDerived(root, it.path, `${it.session}.index`, options.onStep);
      } finally {
        lock.release();
      }
    } else {
      discardDerived(root, it.path, `${it.session}.chain`, options.onStep);
    }
  }
  return items;
}
