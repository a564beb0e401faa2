import { hostname } from "node:os";
import { configuredAgent, defaultLocalRoot } from "@lake/layout/defaults";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CollectorError } from "./errors.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Parse a command's arguments; unknown options are a usage error naming the option. */
export function parse<O extends Options>(args: string[], options: O, positionals = false): { values: Record<string, unknown>; positionals: string[] } {
  try {
    const r = parseArgs({ args: joinDashValues(args, options), options: { help: { type: "boolean", short: "h" }, ...options }, allowPositionals: positionals, strict: true });
    return { values: r.values as Record<string, unknown>, positionals: r.positionals };
  } catch (e) {
    throw new CollectorError("Usage", (e as Error).message);
  }
}

/**
 * `--opt -value` → `--opt=-value` for an option that takes a value, when the value starts with one
 * dash and is not a short option: every Claude Code project folder starts with "-"
 * (`--exclude -tmp-x/**`). A value starting with "--" stays ambiguous (a forgotten value).
 */
function joinDashValues(args: readonly string[], options: Options): string[] {
  const shorts = new Set(Object.values(options).map((o) => o.short).filter((s): s is string => s !== undefined).concat("h"));
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      out.push(...args.slice(i));
      break;
    }
    const next = args[i + 1];
    const name = a.startsWith("--") && !a.includes("=") ? a.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === "string" && next !== undefined && /^-[^-]/.test(next) && !shorts.has(next.slice(1))) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/**
 * The local storage root: --root, else @lake/layout's default ($LAKE_ROOT, else the config file's
 * `root`, else $XDG_DATA_HOME/lake, else ~/.local/share/lake).
 */
export function resolveRoot(flag: unknown, env: NodeJS.ProcessEnv = process.env): string {
  if (typeof flag === "string" && flag) return flag;
  return defaultLocalRoot(env);
}

/** This collector's fleet agent id: --agent, else $LAKE_AGENT, else the config file's `agent`, else the host name (sanitised). */
export function resolveAgent(flag: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const raw = typeof flag === "string" && flag ? flag : configuredAgent(env) || hostname();
  const id = raw.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "");
  if (!id) throw new CollectorError("Usage", `agent id "${raw}" has no usable characters`);
  return id;
}

/** Parse repeated `--source RUNTIME=PATH` flags. */
export function parseSources(flags: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of (Array.isArray(flags) ? flags : []) as string[]) {
    const i = f.indexOf("=");
    if (i <= 0 || i === f.length - 1) throw new CollectorError("Usage", `--source ${f}: expected RUNTIME=PATH`);
    const rt = f.slice(0, i);
    const list = out.get(rt) ?? [];
    list.push(f.slice(i + 1));
    out.set(rt, list);
  }
  return out;
}
