import { lakeVitestConfig } from "@lake/tooling/vitest";

export default lakeVitestConfig();
