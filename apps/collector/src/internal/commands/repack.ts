import { existsSync, readdirSync } from "node:fs";
import { repack } from "@lake/store";
import { parse as parseChain } from "@lake/chain";
import { listSessions } from "@lake/store";
import { CollectorError } from "../errors.js";
import { parse, resolveRoot } from "../options.js";

export const help = `lake-collector repack — re-cut every landed file under a new budget into a new root

Usage: lake-collector repack DEST [--root DIR] [--max-delta-bytes N] [--json]

Keeps each record's bytes and order, carries the cursors over, rebuilds each session's index and
chain in DEST (which must be empty or absent). The source root is not changed.
`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { root: { type: "string" }, "max-delta-bytes": { type: "string" }, json: { type: "boolean" } }, true);
  const dest = positionals[0];
  if (!dest || positionals.length !== 1) throw new CollectorError("Usage", "repack: expected one DEST directory");
  const root = resolveRoot(values.root);
  if (existsSync(dest) && readdirSync(dest).length > 0) throw new CollectorError("Usage", `${dest}: repack destination is not empty`);
  const budget = values["max-delta-bytes"] === undefined ? undefined : Number(values["max-delta-bytes"]);
  if (budget !== undefined && (!Number.isInteger(budget) || budget <= 0)) throw new CollectorError("Usage", `--max-delta-bytes ${String(values["max-delta-bytes"])}: expected a positive integer`);
  const r = await repack(root, dest, budget === undefined ? {} : { maxDeltaBytes: budget });
  let rounds = 0;
  for (const id of listSessions(dest)) if ((await parseChain(dest, id)).published) rounds++;
  process.stdout.write(values.json ? JSON.stringify({ ...r, rounds }) + "\n" : `${dest}: ${r.sessions} sessions, ${r.filesIn} files re-cut into ${r.filesOut} (${r.records} records), ${r.cursors} cursors, ${rounds} chains rebuilt\n`);
  return 0;
}
