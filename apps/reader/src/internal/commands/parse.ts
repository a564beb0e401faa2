import { parseArgs, type ParseArgsConfig } from "node:util";
import { ReaderError } from "../errors.js";

type Options = NonNullable<ParseArgsConfig["options"]>;
type Config<O extends Options> = { args: string[]; options: O; allowPositionals: true; strict: true };

/** parseArgs, strict, with positionals; a bad option becomes a Usage error (exit 2). */
export function parse<const O extends Options>(argv: readonly string[], options: O): ReturnType<typeof parseArgs<Config<O>>> {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new ReaderError("Usage", (e as Error).message.split("\n")[0]!, { cause: e });
  }
}
