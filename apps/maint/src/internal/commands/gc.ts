import { defineCommand, seconds } from "@lake/cli";
import { requireFleet } from "../context.js";
import { COMMON, DEFAULT_GC_GRACE_SECONDS, PARTITION, ctxOf, emit, stoppable, withStore } from "./shared.js";
import { gcStep } from "./steps.js";

/** `lake-maint gc`: delete generations no marker names, after a grace period. */
export const gcCommand = defineCommand({
  summary: "delete compacted generations no marker names, after a grace period",
  description:
    "  Delete the part files and usage rollups of compacted generations no _COMPACTED names, once they and the\n  marker's last swap are older than --grace.\n  Never touches bronze or the live generation.",
  options: { grace: seconds(`how old an unnamed generation must be (default ${DEFAULT_GC_GRACE_SECONDS} s)`, { default: DEFAULT_GC_GRACE_SECONDS }), ...PARTITION, ...COMMON },
  run: ({ values: v, io }) =>
    stoppable(io, () =>
      withStore(v, io, async (store) => {
        await requireFleet(store);
        const r = await gcStep(ctxOf(store, v, io), v.grace, { dt: v.dt, fleet: v.fleet });
        emit(io, v.json, r.value, () => r.lines);
        return r;
      }),
    ),
});
