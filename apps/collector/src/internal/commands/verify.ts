import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { verify as verifyChain } from "@lake/chain";
import { formatProblem, isStoreError, verify as verifyStore } from "@lake/store";
import { defineCommand, jsonLine, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, noSuchRoot, resolveRoot } from "../options.js";

const DESCRIPTION = `Every landed file against its digest, gaps in every append stream (first, middle and end gaps),
and every round of every chain against its commit digest, with each landed sequence a round cites
that is gone. One line per problem. Exit 0 when clean, 3 when any problem, 7 when the root does not
exist or cannot be read.`;

const OPTIONS = { root: ROOT, json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const root = resolveRoot(values.root);
  let store;
  try {
    store = verifyStore(root);
  } catch (e) {
    if (isStoreError(e) && e.code === "NotFound" && e.data.file === root) throw noSuchRoot(root, e);
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
    io.out(jsonLine({ ok, sessions: store.sessions, files: store.files, records: store.records, relanded: store.relanded, chains, problems }));
  } else {
    for (const p of problems) io.out(p + "\n");
    io.out(`${root}: ${store.sessions} sessions, ${store.files} files, ${store.records} records (${store.relanded} re-landed), ${chains} chains: ${ok ? "ok" : `${problems.length} problems`}\n`);
  }
  return ok ? 0 : 3;
}

/** `lake-collector verify`. */
export const command = defineCommand({
  summary: "check a storage root without its sources",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});
