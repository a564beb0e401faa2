import { defineCommand, seconds } from "@lake/cli";
import { requireFleet } from "../context.js";
import { COMMON, PARTITION, ctxOf, emit, heldLine, partitionExit, stoppable, withStore } from "./shared.js";

/** `lake-maint seal`: the fallback sealer for sessions whose collector never sealed them. */
export const sealCommand = defineCommand({
  summary: "seal sessions idle past a threshold whose collector never sealed them",
  description: "  Seal sessions without _SEALED whose newest segment is older than --idle.\n  The collector normally seals; this is a fallback for collectors that died.",
  options: { idle: seconds("how long a session must be idle (default 86400 s)", { default: 86_400 }), ...PARTITION, ...COMMON },
  run: ({ values: v, io }) =>
    stoppable(io, () =>
      withStore(v, io, async (store) => {
        await requireFleet(store);
        const { runSeal } = await import("../sessions.js");
        const r = await runSeal(ctxOf(store, v, io), v.idle, { dt: v.dt, fleet: v.fleet });
        emit(io, v.json, { partitions: r }, () => r.flatMap((p) => [...p.written.map((k) => `sealed ${k}`), ...p.skipped.map((s) => `skipped ${s.key}: ${s.reason}`), ...heldLine(p)]));
        return { code: partitionExit(r), done: r.length };
      }),
    ),
});
