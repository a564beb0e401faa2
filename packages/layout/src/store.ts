// `@lake/layout/store`: opening a store URL and the ObjectStore interface, without the key layout,
// CAS, leases, roster and snapshot modules — for a program that only reads objects (the reader's
// usage reports start faster). Everything here is also exported from the package root.
export { LayoutError, isLayoutError } from "./internal/errors.js";
export type { LayoutErrorCode, LayoutErrorData, LayoutErrorFacts } from "./internal/errors.js";
export type { ConditionalResult, ListOptions, ListPage, ObjectInfo, ObjectStore, StoredObject, UploadOptions, UploadSource } from "./internal/types.js";
export { openStore, parseStoreUrl } from "./internal/url.js";
export { configFile, configuredAgent, defaultLocalRoot, defaultReaderCache, defaultStoreUrl, legacyDefaultStorePath, readConfig } from "./internal/defaults.js";
export type { LakeConfig } from "./internal/defaults.js";
export type { OpenStoreOptions, StoreLocation } from "./internal/url.js";
