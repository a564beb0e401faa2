// verify: every round against its commit digest, every landed file a round cites against the digest it bound.
import { createHash } from "node:crypto";
import { promises as fsp } from "node:fs";
import { join } from "node:path";
import { chainDir, listChain } from "./chain.js";
import { ChainState } from "./conversation.js";
import { errnoCode, isChainError } from "./errors.js";
import { decodeRound } from "./round.js";
import type { Round } from "./types.js";

/** What verify found about one round file. */
export interface RoundVerdict {
  round: number;
  /** The round's file name under `rounds/`. */
  file: string;
  /** `ok`, or why the round's bytes cannot be trusted (undecodable, not canonical, commit digest mismatch, name mismatch). */
  commit: "ok" | "corrupt";
  /** Landed sequences the round cites (files it binds and records it addresses) that are not on disk. */
  missingSeqs: number[];
  /** Landed files on disk whose SHA-256 differs from the digest the round bound. */
  digestMismatches: { seq: number; expected: string; actual: string }[];
  /** One line per problem, naming the file and the reason. */
  problems: string[];
}

/** The verify report of one conversation. */
export interface VerifyReport {
  conversation: string;
  /** True when no problem was found. */
  ok: boolean;
  /** 0 when ok, 1 when any problem (a CLI exits with it). */
  exitCode: 0 | 1;
  rounds: RoundVerdict[];
  /** Every problem, one line each (round problems and chain problems such as a fork or a gap). */
  problems: string[];
}

/**
 * Verify a conversation's chain: each round decodes, is canonical and matches its commit digest and file name; the
 * rounds link 1..N with no fork; each landed sequence a round cites is on disk under `<root>/<id>/` with the digest
 * the round bound. Reports each missing sequence per round. Never throws for a problem it can describe.
 */
export async function verify(root: string, conversationId: string): Promise<VerifyReport> {
  const dir = join(chainDir(root, conversationId), "rounds");
  const listing = await listChain(root, conversationId);
  const landed = await findLanded(join(root, conversationId));
  const hashes = new Map<number, string>();
  const problems: string[] = [];
  const verdicts: RoundVerdict[] = [];
  const decoded: { round: Round; file: string }[] = [];
  if (listing.rounds.length === 0) problems.push(`${dir}: no rounds`);
  for (const l of listing.rounds) {
    const path = join(dir, l.name);
    const v: RoundVerdict = { round: l.round, file: l.name, commit: "ok", missingSeqs: [], digestMismatches: [], problems: [] };
    verdicts.push(v);
    let r: Round;
    try {
      r = decodeRound(await fsp.readFile(path), path);
      if (r.round !== l.round || r.commit.slice(0, 12) !== l.digest12) {
        throw new Error(`${path}: name does not match round ${r.round} with commit ${r.commit.slice(0, 12)}`);
      }
    } catch (e) {
      v.commit = "corrupt";
      v.problems.push(isChainError(e) || e instanceof Error ? e.message : `${path}: ${String(e)}`);
      continue;
    }
    decoded.push({ round: r, file: path });
    const bound = new Map(r.files.map((f) => [f.seq, f.sha256]));
    for (const seq of citedSeqs(r)) {
      const paths = landed.get(seq);
      if (!paths) {
        v.missingSeqs.push(seq);
        v.problems.push(`${path}: round ${r.round} cites landed seq ${seq}, which is missing`);
        continue;
      }
      const expected = bound.get(seq);
      if (expected === undefined) continue;
      let actual = hashes.get(seq);
      if (actual === undefined) {
        actual = createHash("sha256").update(await fsp.readFile(paths[0] as string)).digest("hex");
        hashes.set(seq, actual);
      }
      if (actual !== expected) {
        v.digestMismatches.push({ seq, expected, actual });
        v.problems.push(`${paths[0]}: landed seq ${seq} has SHA-256 ${actual.slice(0, 12)}, round ${r.round} bound ${expected.slice(0, 12)}`);
      }
    }
  }
  // The chain as a whole: numbers 1..N, no fork, each round folding onto the one before.
  const seen = new Map<number, string>();
  for (const v of verdicts) {
    const other = seen.get(v.round);
    if (other !== undefined) problems.push(`${join(dir, v.file)}: round ${v.round} forks the chain (also ${other})`);
    else seen.set(v.round, v.file);
  }
  for (let n = 1; n <= Math.max(0, ...seen.keys()); n++) if (!seen.has(n)) problems.push(`${dir}: round ${n} is missing`);
  const st = new ChainState(conversationId, true);
  const firstOfEach = decoded.filter((d) => seen.get(d.round.round) === d.file.split(/[\\/]/).pop());
  for (const d of firstOfEach) {
    try {
      st.apply(d.round, d.file);
    } catch (e) {
      problems.push(e instanceof Error ? e.message : String(e));
      break;
    }
  }
  for (const v of verdicts) problems.push(...v.problems);
  const ok = problems.length === 0;
  return { conversation: conversationId, ok, exitCode: ok ? 0 : 1, rounds: verdicts, problems };
}

/** Every landed sequence a round names: the files it binds and every record address in it. */
export function citedSeqs(r: Round): number[] {
  const s = new Set<number>();
  for (const f of r.files) s.add(f.seq);
  for (const t of r.turns) for (const x of t.records) s.add(x[0]);
  for (const c of r.calls) {
    if (c.call) s.add(c.call[0]);
    if (c.result) s.add(c.result[0]);
    for (const x of c.fragments) s.add(x[0]);
  }
  for (const l of r.launches) s.add(l.at[0]);
  for (const m of r.messages) s.add(m.at[0]);
  for (const c of r.compactions) s.add(c.at[0]);
  return [...s].sort((a, b) => a - b);
}

/** Landed files under a session directory (`streams/`, `runs/`), by sequence: `<kind>-<collected-at>-<seq>.sd`. */
async function findLanded(sessionDir: string): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  const walk = async (dir: string): Promise<void> => {
    let ents: import("node:fs").Dirent[];
    try {
      ents = await fsp.readdir(dir, { withFileTypes: true });
    } catch (e) {
      if (errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR") return;
      throw e;
    }
    for (const ent of ents) {
      const p = join(dir, ent.name);
      if (ent.isDirectory()) await walk(p);
      else if (ent.isFile()) {
        const m = /^[^.][^/]*-(\d{6,})\.sd$/.exec(ent.name);
        if (m && m[1] !== undefined) {
          const seq = Number(m[1]);
          const list = out.get(seq);
          if (list) list.push(p);
          else out.set(seq, [p]);
        }
      }
    }
  };
  await walk(join(sessionDir, "streams"));
  await walk(join(sessionDir, "runs"));
  return out;
}
