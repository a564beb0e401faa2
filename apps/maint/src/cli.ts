import { parseArgs } from "node:util";

const HELP = `lake-maint — see the README for commands and exit codes`;

/** Run the CLI with the given arguments; resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { help: { type: "boolean", short: "h" } }, allowPositionals: true, strict: false });
  if (values.help || argv.length === 0) {
    process.stdout.write(HELP + "\n");
    return 0;
  }
  process.stderr.write(`lake-maint: unknown command: ${argv[0]}\n`);
  return 2;
}
