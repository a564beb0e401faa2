import { parse as parseChain } from "@lake/chain";
import { listSessions } from "@lake/store";
import { parse, resolveRoot } from "../options.js";
import { finishPending } from "../forget.js";

export const help = `lake-collector parse — publish rounds for every session whose index moved past its chain head

Usage: lake-collector parse [--root DIR] [--session ID]... [--json]

Rounds are derived from the session index only, published under the chain's lock without
replacing any file. collect ends with the same step. Exit 0, or 4 when a chain was locked.
`;

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args, { root: { type: "string" }, session: { type: "string", multiple: true }, json: { type: "boolean" } });
  const root = resolveRoot(values.root);
  await finishPending(root);
  const ids = (values.session as string[] | undefined) ?? listSessions(root);
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
  process.stdout.write(values.json ? JSON.stringify({ sessions: ids.length, published, locked }) + "\n" : `${root}: ${ids.length} sessions, ${published} rounds published${locked.length ? `, ${locked.length} locked` : ""}\n`);
  return locked.length ? 4 : 0;
}
