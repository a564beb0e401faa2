// wal inspect|addr|find|archive: thin over @lake/wal (issue 3's CLI contract).
import { findSession, formatWalInspection, inspectArchive, inspectWal, isWalError, walAddress, type WalInspection } from "@lake/wal";
import { flag, text, type RunContext } from "@lake/cli";
import { usageError, type Io } from "../context.js";
import { EXIT, ReaderError } from "../errors.js";
import { toJson } from "../format.js";
import { readerCommand } from "./parse.js";

function walError(e: unknown): never {
  if (isWalError(e)) {
    const code = e.code === "NotFound" ? "NotFound" : e.code === "Io" ? "Io" : e.code === "InvalidArgument" ? "Usage" : "Corrupt";
    const file = (e.data as { file?: unknown } | undefined)?.file;
    throw new ReaderError(code, e.message.split("\n")[0]!, { cause: e, ...(typeof file === "string" ? { data: { file } } : {}) });
  }
  throw e;
}

/** A refused WAL: a newer writer's is refused (9), every other refusal is malformed data (6). */
function inspectionExit(status: WalInspection["status"]): number {
  return status === "ok" ? EXIT.ok : status === "newer_writer" ? EXIT.refused : EXIT.corrupt;
}

const WAL_OPTIONS = {
  json: flag("inspect, find, archive: print JSON"),
  "state-root": text("DIR", "find: broca's state root"),
} as const;

async function wal({ values, positionals, io }: RunContext<typeof WAL_OPTIONS, Io>): Promise<number> {
  const [sub, ...args] = positionals;
  try {
    switch (sub) {
      case "inspect": {
        if (args.length !== 1) throw usageError("wal inspect: expected FILE");
        const r = await inspectWal(args[0]!);
        io.out((values.json ? toJson(r) : formatWalInspection(r)) + "\n");
        return inspectionExit(r.status);
      }
      case "addr": {
        if (args.length !== 3) throw usageError("wal addr: expected PROJECT_ROOT HARNESS SESSION");
        io.out(walAddress({ project_root: args[0]!, harness: args[1]!, session: args[2]! }) + "\n");
        return 0;
      }
      case "find": {
        if (!values["state-root"]) throw usageError("wal find: --state-root DIR is required");
        if (args.length !== 3) throw usageError("wal find: expected PROJECT_ROOT HARNESS SESSION");
        const r = await findSession(values["state-root"], { project_root: args[0]!, harness: args[1]!, session: args[2]! });
        io.out((values.json ? toJson(r) : `${r.addr}: ${r.where}${r.path ? ` ${r.path}` : ""}${r.container ? ` (container ${r.container})` : ""}`) + "\n");
        return 0;
      }
      case "archive": {
        if (args.length !== 1) throw usageError("wal archive: expected FILE");
        const r = await inspectArchive(args[0]!);
        if (values.json) io.out(toJson(r) + "\n");
        else {
          const lines = [`${args[0]}: ${r.sealed ? "sealed" : "NOT sealed (members not read)"}, ${r.members.length} member(s)`];
          for (const m of r.members) lines.push(`  ${m.addr}  ${m.payload_len} bytes  ${m.sha256_ok ? "ok" : "DIGEST MISMATCH"}`);
          io.out(lines.join("\n") + "\n");
        }
        return r.sealed && r.members.every((m) => m.sha256_ok) ? EXIT.ok : EXIT.corrupt;
      }
      default:
        throw usageError(`wal: expected inspect, addr, find or archive${sub === undefined ? "" : `, got ${JSON.stringify(sub)}`}`);
    }
  } catch (e) {
    walError(e);
  }
}

/** `lake-reader wal …`. */
export const walCommand = readerCommand({
  usage: "inspect|addr|find|archive … [options]",
  description: `broca WAL tools (spec: wal-data-model.md), thin over @lake/wal.
  lake-reader wal inspect FILE [--json]
      decode a WAL file: {"file", "status", "lineage_id", "torn_tail", "records": [{"seq", "type", "gated"}],
      "skipped": [{"seq", "type"}], "error"}; status ok | corrupt | spliced | sequence_error | newer_writer
      (exit 9 newer_writer, 6 every other refusal)
  lake-reader wal addr PROJECT_ROOT HARNESS SESSION
      the 16-hex address of a session (FNV-1a 64 over project_root U+001F harness U+001F session;
      a field containing U+001F is a usage error)
  lake-reader wal find --state-root DIR PROJECT_ROOT HARNESS SESSION [--json]
      live-first resolution: {"addr", "where": "live"|"archive"|"absent", "path", "container"}
  lake-reader wal archive FILE [--json]
      an archive container: {"sealed", "members": [{"addr", "payload_len", "sha256_ok"}]} (unsealed,
      or a member failing its digest: malformed data)`,
  options: WAL_OPTIONS,
  positionals: { names: "SUBCOMMAND ARGS…", min: 0, max: Number.MAX_SAFE_INTEGER },
  run: wal,
});
