import { defineCommand } from "@lake/cli";
import { requireFleet } from "../context.js";
import { COMMON, PARTITION, ctxOf, emit, heldLine, partitionExit, stoppable, withStore } from "./shared.js";

/** `lake-maint digest`: digest.json for every sealed session without one. */
export const digestCommand = defineCommand({
  summary: "write digest.json for every sealed session without one",
  description: "  Write digest.json (create-only) for each sealed session without one.",
  options: { ...PARTITION, ...COMMON },
  run: ({ values: v, io }) =>
    stoppable(io, () =>
      withStore(v, io, async (store) => {
        await requireFleet(store);
        const { runDigest } = await import("../sessions.js");
        const r = await runDigest(ctxOf(store, v, io), { dt: v.dt, fleet: v.fleet });
        emit(io, v.json, { partitions: r }, () => r.flatMap((p) => [...p.written.map((k) => `wrote ${k}`), ...p.skipped.map((s) => `skipped ${s.key}: ${s.reason}`), ...heldLine(p)]));
        return { code: partitionExit(r), done: r.length };
      }),
    ),
});
