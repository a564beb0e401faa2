import { defineCommand } from "@lake/cli";
import { requireFleet } from "../context.js";
import { EXIT } from "../errors.js";
import { COMMON, ctxOf, emit, withStore } from "./shared.js";

/** `lake-maint promote`: the claims gate. */
export const promoteCommand = defineCommand({
  summary: "the claims gate: validate, dedupe, promote into claims/fleet/",
  description: "  The claims gate (lease claims/promote): validate proposals, dedupe, apply the conflict rules, write claims/fleet/<claim_id>.json.",
  options: { ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      await requireFleet(store);
      const { runPromote } = await import("../claims.js");
      const r = await runPromote(ctxOf(store, v, io));
      emit(io, v.json, r, () =>
        r.status === "held"
          ? [`held claims/promote: lease held by ${r.held_by}`]
          : [
              ...r.promoted.map((id) => `promoted ${id}`),
              ...r.revised.map((id) => `revised ${id}`),
              ...r.rejected.map((x) => `rejected ${x.key}: ${x.reason}`),
              ...r.conflicts.map((x) => `conflict ${x.key}: ${x.reason}`),
              `${r.events} events, ${r.promoted.length} promoted, ${r.revised.length} revised, ${r.duplicates} duplicates, ${r.rejected.length} rejected, ${r.conflicts.length} conflicts`,
            ],
      );
      return r.status === "held" ? EXIT.held : EXIT.ok;
    }),
});
