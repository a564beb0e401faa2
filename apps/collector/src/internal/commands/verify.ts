import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { verify as verifyChain } from "@lake/chain";
import { formatProblem, isStoreError, verify as verifyStore } from "@lake/store";
import { CollectorError } from "../errors.js";
import { parse, resolveRoot } from "../options.js";

export const help = `lake-collector verify — check a storage root without its sources

Usage: lake-collector verify [--root DIR] [--json]

Every landed file against its digest, gaps in every append stream (first, middle and end gaps),
and every round of every chain against its commit digest, with each landed sequence a round cites
that is gone. One line per problem. Exit 0 when clean, 3 when any problem, 7 when the root does not
exist or cannot be read.
`;

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args, { root: { type: "string" }, json: { type: "boolean" } });
  const root = resolveRoot(values.root);
  let store;
  try {
    store = verifyStore(root);
  } catch (e) {
    if (isStoreError(e) && e.code === "NotFound" && e.data.file === root) throw new CollectorError("Io", `${root}: no such storage root (ENOENT)`, { cause: e });
    throw e;
  }
  const problems = store.problems.map(formatProblem);
  const convDir = join(root, "_conversations");
  let chains = 0;
  if (existsSync(convDir)) {
    for (const id of readdirSync(convDir).sort()) {
      if (id.startsWith(".")) continue;
      chains++;
      const r = await verifyChain(root, id);
      problems.push(...r.problems);
    }
  }
  const ok = problems.length === 0;
  if (values.json) {
    process.stdout.write(JSON.stringify({ ok, sessions: store.sessions, files: store.files, records: store.records, relanded: store.relanded, chains, problems }) + "\n");
  } else {
    for (const p of problems) process.stdout.write(p + "\n");
    process.stdout.write(`${root}: ${store.sessions} sessions, ${store.files} files, ${store.records} records (${store.relanded} re-landed), ${chains} chains: ${ok ? "ok" : `${problems.length} problems`}\n`);
  }
  return ok ? 0 : 3;
}
