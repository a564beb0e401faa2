export { LakeError, isLakeError, brandOf, brandGuard } from "./internal/lake-error.js";
export type { LakeErrorOptions, ErrorDataMap, BrandGuard } from "./internal/lake-error.js";
