export { main } from "./cli.js";
export type { MainOptions } from "./cli.js";
export { ReaderError, isReaderError } from "./internal/errors.js";
export type { ReaderErrorCode, ReaderErrorData } from "./internal/errors.js";
export { PRICES, PRICING_DATE, PRICING_VERSION, priceKey, priceOf, costOf } from "./internal/pricing.js";
export type { ModelPrice } from "./internal/pricing.js";
