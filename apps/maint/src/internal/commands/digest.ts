import { defineCommand } from "@lake/cli";
import { requireFleet } from "../context.js";
import { COMMON, PARTITION, ctxOf, emit, stoppable, withStore } from "./shared.js";
import { digestStep } from "./steps.js";

/** `lake-maint digest`: digest.json for every sealed session without one. */
export const digestCommand = defineCommand({
  summary: "write digest.json for every sealed session without one",
  description: "  Write digest.json (create-only) for each sealed session without one.",
  options: { ...PARTITION, ...COMMON },
  run: ({ values: v, io }) =>
    stoppable(io, () =>
      withStore(v, io, async (store) => {
        await requireFleet(store);
        const r = await digestStep(ctxOf(store, v, io), { dt: v.dt, fleet: v.fleet });
        emit(io, v.json, r.value, () => r.lines);
        return r;
      }),
    ),
});
