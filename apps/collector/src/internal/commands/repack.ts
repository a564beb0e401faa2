import { existsSync, readdirSync } from "node:fs";
import { repack } from "@lake/store";
import { parse as parseChain } from "@lake/chain";
import { listSessions } from "@lake/store";
import { CollectorError } from "../errors.js";
import { defineCommand, count, jsonLine, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";

const DESCRIPTION = `Keeps each record's bytes and order, carries the cursors over, rebuilds each session's index and
chain in DEST (which must be empty or absent). The source root is not changed.`;

const OPTIONS = { root: ROOT, "max-delta-bytes": count("N", "read budget of each new landed file", { min: 1 }), json: JSON_FLAG } as const;

async function run({ values, positionals, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const dest = positionals[0]!;
  const root = resolveRoot(values.root);
  if (existsSync(dest) && readdirSync(dest).length > 0) throw new CollectorError("Usage", `${dest}: repack destination is not empty`);
  const budget = values["max-delta-bytes"];
  const r = await repack(root, dest, budget === undefined ? {} : { maxDeltaBytes: budget });
  let rounds = 0;
  for (const id of listSessions(dest)) if ((await parseChain(dest, id)).published) rounds++;
  io.out(values.json ? jsonLine({ ...r, rounds }) : `${dest}: ${r.sessions} sessions, ${r.filesIn} files re-cut into ${r.filesOut} (${r.records} records), ${r.cursors} cursors, ${rounds} chains rebuilt\n`);
  return 0;
}

/** `lake-collector repack`. */
export const command = defineCommand({
  summary: "re-cut every landed file under a new budget into a new root",
  description: DESCRIPTION,
  options: OPTIONS,
  positionals: { names: "DEST", min: 1, max: 1 },
  run,
});
