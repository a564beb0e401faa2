// @lake/events/arrow: the Arrow schema of the record table. A subpath of its own, so that code
// which does not build Arrow tables never loads apache-arrow.
export { arrowSchema } from "./internal/arrow.js";
