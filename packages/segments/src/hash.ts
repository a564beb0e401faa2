// `@lake/segments/hash`: the content hash every Parquet file of the fleet records in its footer, and
// the cached check readers run before they read values from a file — without loading DuckDB.
export { CONTENT_HASH_KEY, CONTENT_HASH_PLACEHOLDER, CONTENT_HASH_COPY_OPTION, CheckedFiles, checkContentHash, checkFileSha256, sealContentHash } from "./internal/hash.js";
export type { ContentHashCheck } from "./internal/hash.js";
