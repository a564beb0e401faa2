// lake-collector's version, from its package.json: two levels up from this module, both where tsc
// puts it (dist/internal/) and in the bundle the bin runs (dist/bin/, see the README).
import { readFileSync } from "node:fs";

export const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
