// Claude Code transcripts → canonical records through @lake/adapters (shared by tests and the bench).
import { parseFile } from "@lake/adapters";
import { canonicalize, type CanonicalRecord } from "@lake/events";

/**
 * Every record of a Claude Code JSONL file, canonicalized; `sessionId` (when given) replaces the
 * session id the adapter derives from the file name, so tests can place a file under any session.
 */
export async function claudeRecords(path: string, sessionId?: string): Promise<CanonicalRecord[]> {
  const out: CanonicalRecord[] = [];
  for await (const raw of parseFile(path, { runtime: "claude-code" })) out.push(canonicalize(sessionId === undefined ? raw : { ...raw, session_id: sessionId }, []));
  return out;
}
