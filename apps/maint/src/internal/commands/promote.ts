import { defineCommand } from "@lake/cli";
import { requireFleet } from "../context.js";
import { COMMON, ctxOf, emit, withStore } from "./shared.js";
import { promoteStep } from "./steps.js";

/** `lake-maint promote`: the claims gate. */
export const promoteCommand = defineCommand({
  summary: "the claims gate: validate, dedupe, promote into claims/fleet/",
  description: "  The claims gate (lease claims/promote): validate proposals, dedupe, apply the conflict rules, write claims/fleet/<claim_id>.json.",
  options: { ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      await requireFleet(store);
      const r = await promoteStep(ctxOf(store, v, io));
      emit(io, v.json, r.value, () => r.lines);
      return r.code;
    }),
});
