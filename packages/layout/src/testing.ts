/**
 * @lake/layout/testing — the ObjectStore contract suite, for a backend's own tests: call
 * `storeContract({ name, fresh, sibling })` at the top level of a vitest test file and every test
 * of the contract runs against fresh roots of that backend. Needs vitest (an optional peer).
 */
export { storeContract } from "./internal/testing/contract.js";
export type { ContractBackend } from "./internal/testing/contract.js";
