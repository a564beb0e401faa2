import { defineCommand, seconds } from "@lake/cli";
import { requireFleet } from "../context.js";
import { COMMON, PARTITION, ctxOf, emit, stoppable, withStore } from "./shared.js";
import { sealStep } from "./steps.js";

/** `lake-maint seal`: the fallback sealer for sessions whose collector never sealed them. */
export const sealCommand = defineCommand({
  summary: "seal sessions idle past a threshold whose collector never sealed them",
  description: "  Seal sessions without _SEALED whose newest segment is older than --idle.\n  The collector normally seals; this is a fallback for collectors that died.",
  options: { idle: seconds("how long a session must be idle (default 86400 s)", { default: 86_400 }), ...PARTITION, ...COMMON },
  run: ({ values: v, io }) =>
    stoppable(io, () =>
      withStore(v, io, async (store) => {
        await requireFleet(store);
        const r = await sealStep(ctxOf(store, v, io), v.idle, { dt: v.dt, fleet: v.fleet });
        emit(io, v.json, r.value, () => r.lines);
        return r;
      }),
    ),
});
