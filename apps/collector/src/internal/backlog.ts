// The push backlog: landed files no push has sent yet, per receiver in push.state (or all of them
// when nothing was ever pushed). Lists each session's stream directories; reads no landed file.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { isForgotten, listSessions, parseLandedName } from "@lake/store";
import { readPushState } from "./push.js";

/** What push has not sent yet. */
export interface PushBacklog {
  /** Landed files in the root (forgotten sessions left out). */
  readonly landed_files: number;
  /** Per receiver push.state knows: landed files and sessions not sent there yet. */
  readonly receivers: ReadonlyArray<{ readonly store: string; readonly files: number; readonly sessions: number }>;
  /** Files not sent to the receiver that is furthest behind (all landed files when none is known). */
  files: number;
}

/** Landed files of one session, relative to its directory. */
function landedRels(root: string, sessionId: string): string[] {
  const out: string[] = [];
  for (const area of ["streams", "runs"]) {
    let streams: string[];
    try {
      streams = readdirSync(join(root, sessionId, area));
    } catch {
      continue;
    }
    for (const s of streams) {
      let names: string[];
      try {
        names = readdirSync(join(root, sessionId, area, s));
      } catch {
        continue;
      }
      for (const n of names) if (parseLandedName(n)) out.push(`${area}/${s}/${n}`);
    }
  }
  return out;
}

/** Count the push backlog of a root. Throws the collector's Input error for a damaged push.state. */
export function pushBacklog(root: string): PushBacklog {
  const state = readPushState(root);
  const receivers = Object.entries(state.receivers).map(([store, r]) => ({ store, r, files: 0, sessions: new Set<string>() }));
  let landed = 0;
  for (const id of listSessions(root)) {
    if (isForgotten(root, id)) continue;
    const rels = landedRels(root, id);
    landed += rels.length;
    for (const rc of receivers) {
      const sent = rc.r.sessions[id]?.files ?? {};
      for (const rel of rels) {
        if (sent[rel] === undefined) {
          rc.files++;
          rc.sessions.add(id);
        }
      }
    }
  }
  const list = receivers.map((rc) => ({ store: rc.store, files: rc.files, sessions: rc.sessions.size }));
  return { landed_files: landed, receivers: list, files: list.length ? Math.max(...list.map((x) => x.files)) : landed };
}
