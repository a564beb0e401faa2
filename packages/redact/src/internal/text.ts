// The one entry point for free text an agent or operator writes into the fleet outside a
// transcript record: claims (`lake-maint propose`, the MCP `propose_claim` tool), and any other
// short text field. Every secret is masked in place; nothing is withheld whole (a claim that
// quoted a private key keeps its words and loses the key).
import { RedactError } from "./errors.js";
import { RedactKey, memoryKey } from "./key.js";
import { createRedactor, type Finding, type Redactor } from "./redactor.js";

/** The masked fields and what was found (rule ids and keyed hashes only). */
export interface RedactedText<T> {
  /** A copy of the input with every listed string field masked. */
  readonly value: T;
  /** Rule ids that fired, sorted, each once. */
  readonly rules: readonly string[];
  /** Keyed hashes of the masked secrets, each once. */
  readonly hashes: readonly string[];
  /** Every masked secret; `path` is `[field]`. */
  readonly findings: readonly Finding[];
}

/** Fields of a claim that hold free text: masked by {@link redactText} unless `fields` says otherwise. */
export const CLAIM_TEXT_FIELDS = ["text", "subject", "repo"] as const;

const cache = new WeakMap<RedactKey, Redactor>();
let probe: Redactor | undefined;

function textRedactor(key: RedactKey): Redactor {
  let r = cache.get(key);
  if (!r) cache.set(key, (r = createRedactor({ key, quarantineRules: [] })));
  return r;
}

/**
 * Mask the free-text fields of a claim (or any flat object of text fields) before it is written
 * anywhere. `fields` defaults to {@link CLAIM_TEXT_FIELDS}; fields that are absent or not strings
 * are left as they are. Masking is idempotent: text already masked is not masked again. `key` may
 * be a function: it is called only when a secret is found (text with no secret never touches the
 * key file).
 *
 * ```ts
 * const { value, rules } = redactText(loadOrCreateKey(root), { agent: "a1", text: "token ghp_…" });
 * ```
 *
 * @throws RedactError `InvalidOption` when `key` was not made by this package.
 */
export function redactText<T extends Readonly<Record<string, unknown>>>(key: RedactKey | (() => RedactKey), input: T, fields: readonly string[] = CLAIM_TEXT_FIELDS): RedactedText<T> {
  if (typeof key === "function") {
    probe ??= createRedactor({ key: memoryKey(), quarantineRules: [] });
    const p = probe;
    if (!fields.some((f) => typeof input[f] === "string" && p.redactString(input[f] as string).findings.length > 0)) return { value: { ...input }, rules: [], hashes: [], findings: [] };
    key = key();
  }
  if (!(key instanceof RedactKey)) throw new RedactError("InvalidOption", "redactText: `key` must come from loadOrCreateKey() or memoryKey()");
  const redactor = textRedactor(key);
  const out: Record<string, unknown> = { ...input };
  const findings: Finding[] = [];
  for (const f of fields) {
    const v = input[f];
    if (typeof v !== "string") continue;
    const r = redactor.redactString(v);
    out[f] = r.value;
    for (const x of r.findings) findings.push({ ...x, path: [f] });
  }
  return {
    value: out as T,
    rules: [...new Set(findings.map((x) => x.rule))].sort(),
    hashes: [...new Set(findings.map((x) => x.hash))],
    findings,
  };
}
