import { defineCommand } from "@lake/cli";
import { requireFleet } from "../context.js";
import { COMMON, ctxOf, emit, withStore } from "./shared.js";
import { snapshotStep } from "./steps.js";

/** `lake-maint snapshot`: fold promoted claims into a SQLite snapshot and swap the pointer. */
export const snapshotCommand = defineCommand({
  summary: "fold promoted claims into snapshot/<sha256>.sqlite and swap latest.json",
  description: "  Fold claims/fleet/ into a SQLite file, publish snapshot/<sha256>.sqlite, CAS-swap snapshot/latest.json.\n  An unchanged fold publishes nothing.",
  options: { ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      await requireFleet(store);
      const r = await snapshotStep(ctxOf(store, v, io));
      emit(io, v.json, r.value, () => r.lines);
      return r.code;
    }),
});
