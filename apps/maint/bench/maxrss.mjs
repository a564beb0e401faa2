// Preloaded into a child (`node --import ./bench/maxrss.mjs …`): prints the process's peak RSS on
// stderr as it exits, `maxrss_kb=N` (process.resourceUsage().maxRSS: DuckDB's threads included).
process.on("exit", () => process.stderr.write(`\nmaxrss_kb=${process.resourceUsage().maxRSS}\n`));
