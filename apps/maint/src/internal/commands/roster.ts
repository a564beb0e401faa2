import { defineCommand, flag } from "@lake/cli";
import { listRoster } from "@lake/layout";
import { EXIT } from "../errors.js";
import { COMMON, emit, orNone, withStore } from "./shared.js";

/** `lake-maint roster list`. */
export const rosterListCommand = defineCommand({
  summary: "agents with a live heartbeat",
  description: "  Agents with a live heartbeat (--all: expired ones too), as a JSON array with --json.",
  options: { all: flag("expired agents too"), ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      const r = await listRoster(store, { includeExpired: v.all });
      emit(io, v.json, r, () => orNone(r.map((a) => `${a.agent_id} ${a.runtime} ${a.repo} ${a.branch} ${a.tool || "-"} expires=${a.expires_at}${a.live ? "" : " (expired)"}`), v.all ? "no agents in the roster" : "no live agents"));
      return EXIT.ok;
    }),
});
