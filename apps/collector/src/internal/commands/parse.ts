import { parse as parseChain } from "@lake/chain";
import { listSessions } from "@lake/store";
import { finishPending } from "../pending.js";
import { defineCommand, jsonLine, texts, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";

const DESCRIPTION = `Rounds are derived from the session index only, published under the chain's lock without
replacing any file. collect ends with the same step. Exit 0, or 4 when a chain was locked.`;

const OPTIONS = { root: ROOT, session: texts("ID", "only this session (repeatable)"), json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const root = resolveRoot(values.root);
  await finishPending(root);
  const ids = values.session.length > 0 ? values.session : listSessions(root);
  let published = 0;
  const locked: string[] = [];
  for (const id of ids) {
    try {
      const r = await parseChain(root, id);
      if (r.published) published++;
    } catch (e) {
      if ((e as { code?: string }).code === "Locked") locked.push(id);
      else throw e;
    }
  }
  io.out(values.json ? jsonLine({ sessions: ids.length, published, locked }) : `${root}: ${ids.length} sessions, ${published} rounds published${locked.length ? `, ${locked.length} locked` : ""}\n`);
  return locked.length ? 4 : 0;
}

/** `lake-collector parse`. */
export const command = defineCommand({
  summary: "publish rounds for every session whose index moved past its chain head",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});
