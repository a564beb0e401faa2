import { lakeVitestConfig } from "@lake/tooling/vitest";

export default lakeVitestConfig({ s3: true });
