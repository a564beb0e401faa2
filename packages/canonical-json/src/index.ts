export { canonicalJson } from "./internal/canonical-json.js";
export type { CanonicalJsonOptions } from "./internal/canonical-json.js";
