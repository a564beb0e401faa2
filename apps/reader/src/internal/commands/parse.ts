import type { parseArgs, ParseArgsConfig } from "node:util";
import { flag, parseOptions, value, values, type Option } from "@lake/cli";

type Options = NonNullable<ParseArgsConfig["options"]>;
type Config<O extends Options> = { args: string[]; options: O; allowPositionals: true; strict: true };

/**
 * A command's arguments against its option table, read by @lake/cli's parser (its rules and its
 * usage errors, exit 2), in node:util parseArgs's shape: an absent option is undefined, `-h`/`--help`
 * sets `help` and skips every other check. Positionals are the command's to check.
 */
export function parse<const O extends Options>(argv: readonly string[], options: O): ReturnType<typeof parseArgs<Config<O>>> {
  const table: Record<string, Option<unknown>> = {};
  for (const [name, o] of Object.entries(options)) {
    if (name === "help") continue;
    const common = o.short !== undefined ? { short: o.short } : {};
    table[name] = o.type === "boolean" ? flag("", common) : o.multiple ? values("VALUE", "", (raw) => raw, common) : value("VALUE", "", (raw) => raw, common);
  }
  const r = parseOptions(table, argv, { names: "", min: 0, max: Number.MAX_SAFE_INTEGER });
  const out: Record<string, unknown> = {};
  if (r.help) out.help = true;
  for (const [name, o] of Object.entries(options)) {
    const v = (r.values as Record<string, unknown>)[name];
    if (o.type === "boolean" ? v === true : Array.isArray(v) ? v.length > 0 : v !== undefined) out[name] = v;
  }
  return { values: out, positionals: r.positionals } as unknown as ReturnType<typeof parseArgs<Config<O>>>;
}
