// Preload (`node --import`) that records every path the process opens through node:fs — opens,
// whole-file reads and writes, directory listings — and writes them as JSON to
// $LAKE_TEST_OPENS_OUT when the process exits. Patched on the CommonJS fs object and synced to the
// ESM named exports, so `import { openSync } from "node:fs"` in the code under test sees it.
import fs from "node:fs";
import fsp from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";

const out = process.env.LAKE_TEST_OPENS_OUT;
const opened = [];
const pathOf = (p) => (typeof p === "string" ? p : p instanceof URL ? p.pathname : Buffer.isBuffer(p) ? p.toString() : undefined);
// A call made inside another recorded one is the same open (readFileSync of a Buffer opens through
// fs.openSync): recorded once, as the outer call.
let inside = 0;
const wrap = (obj, name, how) => {
  const orig = obj[name];
  obj[name] = function (p, ...rest) {
    const path = pathOf(p);
    if (path !== undefined && inside === 0) opened.push({ how, path });
    inside++;
    try {
      return orig.call(this, p, ...rest);
    } finally {
      inside--;
    }
  };
};
for (const n of ["openSync", "open", "readFileSync", "readFile", "writeFileSync", "writeFile", "appendFileSync", "appendFile", "readdirSync", "readdir", "opendirSync", "opendir", "createReadStream", "createWriteStream"]) {
  if (typeof fs[n] === "function") wrap(fs, n, n);
}
for (const n of ["open", "readFile", "writeFile", "appendFile", "readdir", "opendir"]) {
  if (typeof fsp[n] === "function") wrap(fsp, n, `promises.${n}`);
}
syncBuiltinESMExports();
if (out) process.on("exit", () => fs.writeFileSync(out, JSON.stringify(opened)));
