// Preload (`node --import`) that records every fsync and fdatasync the process makes through
// node:fs, with the path of the descriptor (as it was opened), and every open, and writes them as
// JSON ({how, path}) to $LAKE_TEST_SYNCS_OUT when the process exits. Patched on the CommonJS fs
// object and synced to the ESM named exports, so `import { fsyncSync } from "node:fs"` in the code
// under test sees it.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const out = process.env.LAKE_TEST_SYNCS_OUT;
const seen = [];
const paths = new Map();
const pathOf = (p) => (typeof p === "string" ? p : p instanceof URL ? p.pathname : Buffer.isBuffer(p) ? p.toString() : undefined);
const openSync = fs.openSync;
fs.openSync = function (p, ...rest) {
  const fd = openSync.call(this, p, ...rest);
  const path = pathOf(p);
  if (path !== undefined) {
    paths.set(fd, path);
    seen.push({ how: "open", path });
  }
  return fd;
};
for (const [name, how] of [["fsyncSync", "fsync"], ["fdatasyncSync", "fdatasync"]]) {
  const orig = fs[name];
  fs[name] = function (fd, ...rest) {
    seen.push({ how, path: paths.get(fd) ?? `fd ${fd}` });
    return orig.call(this, fd, ...rest);
  };
}
syncBuiltinESMExports();
if (out) process.on("exit", () => fs.writeFileSync(out, JSON.stringify(seen)));
