import type { UserConfig } from "vitest/config";
export declare function lakeVitestConfig(options?: { s3?: boolean; testTimeout?: number; include?: string[] }): UserConfig;
