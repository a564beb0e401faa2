// A child process for lazy-sdk.test.ts. Usage: sdk-load.mjs <fileUrl> [<s3Url>]
// Imports the built package, uses the file:// store, and prints one JSON line with the number of
// loaded modules whose path contains "@aws-sdk" after each step (and whether importing loaded
// node:crypto, which the first hash loads); with an s3:// URL it then opens
// that store, writes and reads one object, and counts again.
import { createRequire } from "node:module";
import { openStore } from "../../dist/index.js";

const cache = createRequire(import.meta.url).cache;
const sdkModules = () => Object.keys(cache).filter((p) => p.includes("@aws-sdk")).length;

const [fileUrl, s3Url] = process.argv.slice(2);
const out = { afterImport: sdkModules(), cryptoAfterImport: process.moduleLoadList.includes("NativeModule crypto") };
const local = openStore(fileUrl);
await local.put("probe/a", new TextEncoder().encode("local"));
out.localRead = new TextDecoder().decode((await local.get("probe/a")).body);
local.close();
out.afterFile = sdkModules();
if (s3Url !== undefined) {
  const remote = openStore(s3Url);
  out.afterS3Open = sdkModules();
  await remote.put("probe/b", new TextEncoder().encode("remote"));
  out.s3Read = new TextDecoder().decode((await remote.get("probe/b")).body);
  remote.close();
}
process.stdout.write(JSON.stringify(out) + "\n");
