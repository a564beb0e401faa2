import { count, defineCommand } from "@lake/cli";
import { requireFleet } from "../context.js";
import { COMMON, PARTITION, ctxOf, emit, stoppable, withStore } from "./shared.js";
import { compactStep } from "./steps.js";

/** `lake-maint compact`: each partition's sealed sessions into a new generation. */
export const compactCommand = defineCommand({
  summary: "compact each (dt, fleet) partition's sealed sessions into a new generation",
  description:
    "  Compact each (dt, fleet) partition's sealed sessions into gen=<hash>/part-*.parquet and its usage rollup\n  (gen=<hash>/usage.json, usage.keys), then swap _COMPACTED.\n  A partition whose marker already names its sealed-session set is left alone.",
  options: {
    ...PARTITION,
    "part-rows": count("N", "rows per part file (default 1000000)", { default: 1_000_000, min: 1 }),
    "zstd-level": count("N", "zstd level of the parts, 1-22 (default 3; 16+ is ~15% smaller and 10-20x slower)", { min: 1, max: 22 }),
    "memory-limit": count("MIB", "DuckDB memory limit in MiB; past it DuckDB spills to the temp directory (default 384)", { default: 384, min: 16 }),
    threads: count("N", "DuckDB threads (default: the cores, at most 2)", { min: 1 }),
    ...COMMON,
  },
  run: ({ values: v, io }) =>
    stoppable(io, () =>
      withStore(v, io, async (store) => {
        await requireFleet(store);
        const level = v["zstd-level"];
        const r = await compactStep(ctxOf(store, v, io), { dt: v.dt, fleet: v.fleet, partRows: v["part-rows"], zstdLevel: level, memoryLimitMb: v["memory-limit"], threads: v.threads });
        emit(io, v.json, r.value, () => r.lines);
        return r;
      }),
    ),
});
