export { main } from "./cli.js";
export type { MainOptions } from "./cli.js";
export { ReaderError, isReaderError } from "./internal/errors.js";
export type { ReaderErrorCode, ReaderErrorData, ReaderErrorFacts } from "./internal/errors.js";
export { DATASET, COST_MODES, Pricing, loadPricing, readPricingFile, priceContribution, costAt, priceAt, modelCandidates, tierStarts } from "./internal/pricing.js";
export type { CostMode, CostOptions, ConditionalPrice, DatasetInfo, LoadPricingOptions, MatchLogic, ModelPrice, Price, PricedCost, PricedModel, Priceable } from "./internal/pricing.js";
export { priceUsage, sessionReport, periodReport, blocksReport } from "./internal/usage.js";
export type { PricedUsage, PricingInfo, UsageNumbers } from "./internal/usage.js";
