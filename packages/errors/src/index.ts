export { LakeError, defineError, isLakeError, brandOf, brandGuard } from "./internal/lake-error.js";
export type { LakeErrorOptions, LakeErrorClass, ErrorDataMap, BrandGuard } from "./internal/lake-error.js";
