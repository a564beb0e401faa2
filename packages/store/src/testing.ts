/**
 * @lake/store/testing — a landed root for another package's or app's tests, built through the real
 * store (locks, cursors, landed files, index) from source files and a converter: what a collector
 * pass would have left, without running one.
 */
export { landRoot, recordLines } from "./internal/land-root.js";
export type { RootSource, LandRootOptions } from "./internal/land-root.js";
