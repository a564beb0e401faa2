import { defineCommand } from "@lake/cli";
import { EXIT } from "../errors.js";
import { COMMON, emit, withStore } from "./shared.js";

/** `lake-maint verify`: one line per problem. */
export const verifyCommand = defineCommand({
  summary: "check every key, segment and marker; one line per problem",
  description:
    '  Check every key against the layout, read every segment and part, check _SEALED, _COMPACTED, digests,\n  claims and the snapshot pointer. Prints one line per problem ("<key>: <problem>"); exit 3 when any.',
  options: { ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      const { runVerify } = await import("../verify.js");
      const r = await runVerify(store);
      emit(io, v.json, r, () => [
        ...r.problems.map((p) => `${p.key}: ${p.problem}`),
        ...(r.problems.length === 0 ? [`ok: ${r.keys} keys, ${r.sessions} sessions, ${r.segments} segments${r.late_segments ? ` (${r.late_segments} late, past their _SEALED)` : ""}, ${r.compacted_partitions} compacted partitions`] : []),
      ]);
      return r.problems.length === 0 ? EXIT.ok : EXIT.partial;
    }),
});
