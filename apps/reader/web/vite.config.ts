// Builds the web UI of `lake-reader serve` into dist/web (shipped in the package; no CDN).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  // @lake/redact is bundled for MASK_PATTERN alone (tree-shaken); its Node-only modules, never
  // reached from the UI, would each print an "externalized for browser compatibility" warning.
  logLevel: "error",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
  },
});
