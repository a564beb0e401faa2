import { defineCommand, text } from "@lake/cli";
import { EXIT } from "../errors.js";
import { COMMON, emit, withStore } from "./shared.js";

/** `lake-maint propose`: append a proposed claim, its secrets masked first. */
export const proposeCommand = defineCommand({
  summary: "append a proposed claim (claims/events/…)",
  description:
    "  Append a proposed claim to claims/events/dt=<today>/agent=<ID>/<ulid>.json.\n  Secrets in the text, subject and repo are masked before anything is written\n  ([REDACTED:<rule>:<hash>], keyed by DIR/redact.key; --root defaults to $LAKE_ROOT, else the local root).",
  options: {
    agent: text("ID", "the proposing agent", { required: true }),
    text: text("TEXT", "the claim", { required: true }),
    subject: text("S", "what the claim is about"),
    repo: text("R", "the repository"),
    kind: text("K", "the claim's kind (default fact)", { default: "fact" }),
    "claim-id": text("ID", "revise this claim instead of deriving an id"),
    root: text("DIR", "the local root holding redact.key"),
    ...COMMON,
  },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      const claimId = v["claim-id"];
      const [{ proposeClaim }, { redactText, loadOrCreateKey }, { defaultLocalRoot }] = await Promise.all([import("../claims.js"), import("@lake/redact"), import("@lake/layout/store")]);
      const masked = redactText(() => loadOrCreateKey(v.root ?? defaultLocalRoot(io.env)), { text: v.text, subject: v.subject ?? "", repo: v.repo ?? "" });
      const r = await proposeClaim(store, { agent: v.agent, ...masked.value, kind: v.kind, ...(claimId !== undefined ? { claim_id: claimId } : {}) });
      emit(io, v.json, { ...r, masked: masked.findings.map((f) => ({ rule: f.rule, hash: f.hash, field: f.path[0] })) }, () => [
        `proposed ${r.key}${masked.findings.length ? ` (${masked.findings.length} secret${masked.findings.length === 1 ? "" : "s"} masked: ${masked.rules.join(", ")})` : ""}`,
      ]);
      return EXIT.ok;
    }),
});
