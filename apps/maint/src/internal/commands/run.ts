import { count, defineCommand, seconds } from "@lake/cli";
import { requireFleet } from "../context.js";
import { EXIT, describeError } from "../errors.js";
import { COMMON, DEFAULT_GC_GRACE_SECONDS, PARTITION, ctxOf, emit, stoppable, withStore } from "./shared.js";
import { compactStep, digestStep, gcStep, promoteStep, sealStep, snapshotStep, type StepResult } from "./steps.js";

/** The steps of `run`, in order. */
export const RUN_STEPS = ["seal", "digest", "compact", "promote", "snapshot", "gc"] as const;
type StepName = (typeof RUN_STEPS)[number];

/**
 * A failed step (it threw: exit 1, or 5 to 9) stops the steps that depend on it: gc collects what
 * compact replaced, snapshot folds what promote wrote. Every other step still runs — seal, digest and
 * compact only ever act on what is sealed; promote and snapshot do not touch sessions.
 */
const DEPENDS: Partial<Record<StepName, StepName>> = { gc: "compact", snapshot: "promote" };

/** Exit codes from least to most severe: `run` exits with the most severe of its steps. */
const SEVERITY: readonly number[] = [EXIT.ok, EXIT.partial, EXIT.locked, EXIT.refused, EXIT.notFound, EXIT.corrupt, EXIT.store, EXIT.io, EXIT.internal];

/** The most severe of exit codes (an unknown code counts as the most severe). */
export function worstExit(codes: readonly number[]): number {
  const rank = (c: number) => (SEVERITY.includes(c) ? SEVERITY.indexOf(c) : SEVERITY.length);
  return codes.reduce((w, c) => (rank(c) > rank(w) ? c : w), EXIT.ok);
}

/** One step's outcome in `run --json`. */
interface StepOutcome {
  readonly step: StepName;
  readonly code: number;
  readonly result?: unknown;
  readonly error?: string;
  readonly skipped?: string;
}

/** `lake-maint run`: the whole maintenance pass, for cron or a systemd timer. */
export const runCommand = defineCommand({
  summary: "seal, digest, compact, promote, snapshot and gc in one pass (for cron or a timer)",
  description:
    "  Run seal → digest → compact → promote → snapshot → gc, each as its own command would with the same\n" +
    "  options, printing each step's lines prefixed with its name. A step that fails (an error) is reported and\n" +
    "  the next steps still run, except those that depend on it: gc after a failed compact, snapshot after a\n" +
    "  failed promote are skipped. Exit code: the most severe of the steps' (0 < 1 < 5 < 4 < 3 < 6 < 7).",
  options: {
    idle: seconds("seal: how long a session must be idle (default 86400 s)", { default: 86_400 }),
    "part-rows": count("N", "compact: rows per part file (default 1000000)", { default: 1_000_000, min: 1 }),
    "zstd-level": count("N", "compact: zstd level of the parts, 1-22 (default 3)", { min: 1, max: 22 }),
    "memory-limit": count("MIB", "compact: DuckDB memory limit in MiB; past it DuckDB spills to the temp directory (default 384)", { default: 384, min: 16 }),
    threads: count("N", "compact: DuckDB threads (default: the cores, at most 2)", { min: 1 }),
    grace: seconds(`gc: how old an unnamed generation must be (default ${DEFAULT_GC_GRACE_SECONDS} s)`, { default: DEFAULT_GC_GRACE_SECONDS }),
    ...PARTITION,
    ...COMMON,
  },
  run: ({ values: v, io }) =>
    stoppable(io, () =>
      withStore(v, io, async (store) => {
        await requireFleet(store);
        const ctx = ctxOf(store, v, io);
        const filter = { dt: v.dt, fleet: v.fleet };
        const steps: Record<StepName, () => Promise<StepResult>> = {
          seal: () => sealStep(ctx, v.idle, filter),
          digest: () => digestStep(ctx, filter),
          compact: () => compactStep(ctx, { ...filter, partRows: v["part-rows"], zstdLevel: v["zstd-level"], memoryLimitMb: v["memory-limit"], threads: v.threads }),
          promote: () => promoteStep(ctx),
          snapshot: () => snapshotStep(ctx),
          gc: () => gcStep(ctx, v.grace, filter),
        };
        const outcomes: StepOutcome[] = [];
        const failed = new Set<StepName>();
        let done = 0;
        for (const name of RUN_STEPS) {
          if (ctx.shouldStop()) break;
          const dep = DEPENDS[name];
          if (dep !== undefined && failed.has(dep)) {
            outcomes.push({ step: name, code: EXIT.ok, skipped: `${dep} failed` });
            if (!v.json) io.out(`${name}: skipped: ${dep} failed\n`);
            continue;
          }
          try {
            const r = await steps[name]();
            done += r.done;
            outcomes.push({ step: name, code: r.code, result: r.value });
            if (!v.json) for (const l of r.lines) io.out(`${l.startsWith(`${name}: `) ? l : `${name}: ${l}`}\n`);
          } catch (e) {
            const d = describeError(e);
            failed.add(name);
            outcomes.push({ step: name, code: d.code, error: d.message.split("\n")[0]! });
            io.err(`lake-maint run: ${name}: ${d.message.split("\n")[0]}\n`);
          }
        }
        const code = worstExit(outcomes.map((o) => o.code));
        emit(io, v.json, { steps: outcomes, code }, () => [`run: exit ${code} (${outcomes.map((o) => `${o.step} ${o.skipped !== undefined ? "skipped" : o.code}`).join(", ")})`]);
        return { code, done };
      }),
    ),
});
