#!/usr/bin/env node
// `statusline` runs on every refresh of Claude Code's status line: it starts from its own module,
// bundled into one file with what it imports (no command-line framework, one file to load), which
// hands anything unusual back to the full CLI.
const argv = process.argv.slice(2);
if (argv[0] === "statusline") {
  const { runStatusline } = await import("../dist/internal/statusline.bundle.js");
  process.exitCode = await runStatusline(argv);
} else {
  const { main } = await import("../dist/cli.js");
  process.exitCode = await main(argv);
}
