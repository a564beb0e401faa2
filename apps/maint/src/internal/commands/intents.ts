import { defineCommand, flag } from "@lake/cli";
import { listIntents } from "@lake/layout";
import { EXIT } from "../errors.js";
import { COMMON, emit, orNone, withStore } from "./shared.js";

/** `lake-maint intents list`. */
export const intentsListCommand = defineCommand({
  summary: "live intent declarations",
  description: "  Live intent declarations (--all: expired ones too), as a JSON array with --json.",
  options: { all: flag("expired declarations too"), ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      const r = await listIntents(store, { includeExpired: v.all });
      emit(io, v.json, r, () => orNone(r.flatMap((a) => a.intents.map((i) => `${a.agent_id} ${i.repo} ${i.resource} expires=${a.expires_at}${a.live ? "" : " (expired)"}`)), v.all ? "no intents" : "no intents declared"));
      return EXIT.ok;
    }),
});
