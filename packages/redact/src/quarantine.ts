// `@lake/redact/quarantine`: the quarantine record type alone, without the rules or the matcher,
// for a program that only recognises withheld records (lake-collector's push). Also exported from
// the package root.
export { QUARANTINE_TYPE } from "./internal/quarantine-type.js";
