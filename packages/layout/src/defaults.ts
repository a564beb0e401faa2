// `@lake/layout/defaults`: where lake keeps things when no flag says (local root, fleet store,
// reader cache, agent id), resolved as flag > environment > config file > built-in default, and
// the config file itself. Node built-ins only, a config file or not: the collector's hook resolves its
// root through it, and lake-reader's status line its root and cache. Everything here is also exported
// from `@lake/layout/store` and the package root.
export { configFile, configuredAgent, defaultLocalRoot, defaultReaderCache, defaultStoreUrl, legacyDefaultStorePath, readConfig } from "./internal/defaults.js";
export type { LakeConfig } from "./internal/defaults.js";
export { LayoutError, isLayoutError } from "./internal/errors.js";
export type { LayoutErrorCode, LayoutErrorData, LayoutErrorFacts } from "./internal/errors.js";
