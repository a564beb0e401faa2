import { count, defineCommand } from "@lake/cli";
import { requireFleet } from "../context.js";
import { COMMON, PARTITION, ctxOf, emit, partitionExit, stoppable, withStore } from "./shared.js";

/** `lake-maint compact`: each partition's sealed sessions into a new generation. */
export const compactCommand = defineCommand({
  summary: "compact each (dt, fleet) partition's sealed sessions into a new generation",
  description:
    "  Compact each (dt, fleet) partition's sealed sessions into gen=<hash>/part-*.parquet and its usage rollup\n  (gen=<hash>/usage.json, usage.keys), then swap _COMPACTED.\n  A partition whose marker already names its sealed-session set is left alone.",
  options: {
    ...PARTITION,
    "part-rows": count("N", "rows per part file (default 1000000)", { default: 1_000_000, min: 1 }),
    "zstd-level": count("N", "zstd level of the parts, 1-22 (default 3; 16+ is ~15% smaller and 10-20x slower)", { min: 1, max: 22 }),
    ...COMMON,
  },
  run: ({ values: v, io }) =>
    stoppable(io, () =>
      withStore(v, io, async (store) => {
        await requireFleet(store);
        const { runCompact } = await import("../compact.js");
        const level = v["zstd-level"];
        const r = await runCompact(ctxOf(store, v, io), { dt: v.dt, fleet: v.fleet, partRows: v["part-rows"], ...(level !== undefined ? { zstdLevel: level } : {}) });
        emit(io, v.json, { partitions: r }, () =>
          r.flatMap((p) => [
            p.status === "compacted"
              ? `compacted dt=${p.dt}/fleet=${p.fleet}: gen ${p.gen} (${p.rows} rows from ${p.source_rows}, ${p.parts} parts, epoch ${p.epoch})`
              : p.status === "held"
                ? `held dt=${p.dt}/fleet=${p.fleet}: lease held by ${p.held_by}`
                : `${p.status} dt=${p.dt}/fleet=${p.fleet}${p.gen ? `: gen ${p.gen}` : ""}`,
            ...p.skipped.map((s) => `skipped ${s.key}: ${s.reason}`),
            ...(p.late ?? []).map((k) => `late ${k}: past its session's _SEALED count, compacted with the session`),
          ]),
        );
        return { code: partitionExit(r), done: r.length };
      }),
    ),
});
