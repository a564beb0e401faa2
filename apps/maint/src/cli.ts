// lake-maint: fleet store maintenance. One module per command under internal/commands/; the
// operations (DuckDB, SQLite) load when their command runs, so lease/roster/help start fast.
import { readFileSync } from "node:fs";
import { processIo, runCli, type App, type Io } from "@lake/cli";
import { compactCommand } from "./internal/commands/compact.js";
import { digestCommand } from "./internal/commands/digest.js";
import { forgetCommand } from "./internal/commands/forget.js";
import { gcCommand } from "./internal/commands/gc.js";
import { initCommand } from "./internal/commands/init.js";
import { intentsListCommand } from "./internal/commands/intents.js";
import { leaseAcquireCommand, leaseListCommand, leaseReleaseCommand } from "./internal/commands/lease.js";
import { promoteCommand } from "./internal/commands/promote.js";
import { proposeCommand } from "./internal/commands/propose.js";
import { rosterListCommand } from "./internal/commands/roster.js";
import { runCommand } from "./internal/commands/run.js";
import { sealCommand } from "./internal/commands/seal.js";
import { snapshotCommand } from "./internal/commands/snapshot.js";
import { verifyCommand } from "./internal/commands/verify.js";
import { describeError } from "./internal/errors.js";

export { describeError };


const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** lake-maint's program: its commands, notes and exit codes (the help prints them). */
export const APP: App = {
  name: "lake-maint",
  version: VERSION,
  summary: "fleet store maintenance (init, seal, digest, compact, claims, snapshot, verify, gc, run, leases)",
  commands: {
    init: initCommand,
    seal: sealCommand,
    digest: digestCommand,
    compact: compactCommand,
    propose: proposeCommand,
    promote: promoteCommand,
    snapshot: snapshotCommand,
    verify: verifyCommand,
    gc: gcCommand,
    run: runCommand,
    forget: forgetCommand,
    "lease acquire": leaseAcquireCommand,
    "lease release": leaseReleaseCommand,
    "lease list": leaseListCommand,
    "roster list": rosterListCommand,
    "intents list": intentsListCommand,
  },
  notes: `Every command takes --store URL (default: $LAKE_STORE, else ~/.local/share/lake/fleet, the fleet/ directory
inside the local root; lake-collector push moves a store from the old default ~/.local/share/fleet)
Read commands take --json. Durations take seconds or a unit: 90, 90s, 15m, 2h, 1d.
Ctrl-C stops seal, digest, compact and gc before their next partition (the one in progress finishes,
its lease released) and says "interrupted; N partitions done, run again to continue".`,
  describeError,
};

/** Run the CLI with the given arguments; resolves to the process exit code. */
export function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return runCli(APP, argv, io);
}
