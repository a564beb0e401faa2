import { WalError } from "./errors.js";

/**
 * The known-feature table: every must-understand feature a gated (ver 3) frame may require that
 * this build can interpret. A frame requiring anything else refuses the whole WAL as NewerWriter.
 */
export const KNOWN_FEATURES: readonly string[] = Object.freeze([
  "agent-run-scopes/v1",
  "dispatch-module/v1",
  "flow-scopes/v1",
  "plan-manifest/v1",
  "scope/v1",
  "steer-queue/v1",
]);

const KNOWN = new Set(KNOWN_FEATURES);
const NAME = /^[a-z0-9-]+\/v[0-9]+$/;

/** True when `name` is shaped like a feature name: `[a-z0-9-]+` then `/v` and a number. */
export function isFeatureName(name: string): boolean {
  return NAME.test(name);
}

/** True when this build knows `name`. */
export function isKnownFeature(name: string): boolean {
  return KNOWN.has(name);
}

/**
 * The features a record needs, derived from its content as broca's encoder does: a run_started
 * with `scope` (scope/v1; agent-run-scopes/v1 too when the scope carries agent_id or run_id) or
 * `manifest` (plan-manifest/v1); a tool_dispatch_intent with `module_id` or `schema_pin`
 * (dispatch-module/v1); every `steered` record (steer-queue/v1). Sorted, no duplicates.
 */
export function recordRequirements(record: { readonly type: string } & Record<string, unknown>): string[] {
  const req = new Set<string>();
  switch (record.type) {
    case "run_started": {
      const scope = record["scope"];
      if (scope !== undefined && scope !== null) {
        req.add("scope/v1");
        const s = scope as Record<string, unknown>;
        if (s["agent_id"] !== undefined || s["run_id"] !== undefined) req.add("agent-run-scopes/v1");
      }
      if (record["manifest"] !== undefined && record["manifest"] !== null) req.add("plan-manifest/v1");
      break;
    }
    case "tool_dispatch_intent":
      if (record["module_id"] !== undefined || record["schema_pin"] !== undefined) req.add("dispatch-module/v1");
      break;
    case "steered":
      req.add("steer-queue/v1");
      break;
    default:
      break;
  }
  return [...req].sort();
}

/** Validate caller-supplied feature names for writing: well-formed and known to this build. */
export function checkWritableFeatures(names: readonly string[]): void {
  for (const n of names) {
    if (!isFeatureName(n)) throw new WalError("InvalidArgument", `feature name ${JSON.stringify(n)} is malformed`);
    if (!isKnownFeature(n)) throw new WalError("InvalidArgument", `feature ${n} is not in this build's known-feature table`);
  }
}
