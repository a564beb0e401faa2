// @lake/redact: secret detection and masking before anything lands.
export { RedactError, isRedactError } from "./internal/errors.js";
export type { RedactErrorCode, RedactErrorData, RedactErrorFacts } from "./internal/errors.js";
export { RedactKey, KEY_FILE_NAME, loadOrCreateKey, memoryKey } from "./internal/key.js";
export { defaultRules, defaultRuleIds } from "./internal/rules.js";
export type { Rule } from "./internal/rules.js";
export { createRedactor, QUARANTINE_TYPE } from "./internal/redactor.js";
export type { Finding, JsonValue, QuarantineRecord, RedactedRecord, RedactResult, Redactor, RedactorOptions } from "./internal/redactor.js";
export { CLAIM_TEXT_FIELDS, redactText } from "./internal/text.js";
export type { RedactedText } from "./internal/text.js";
export { MASK_PATTERN } from "./internal/mask.js";
