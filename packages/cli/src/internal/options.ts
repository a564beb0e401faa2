// Option tables: each option says how it is spelled, what it takes, how its value is checked and how
// the help describes it. parseOptions reads a command line against one table.
import { usage } from "./errors.js";

/** One option of a command's table. Build them with {@link flag}, {@link text}, {@link seconds} … */
export interface Option<V> {
  /** A flag takes no value; a value option takes the next argument (or `--name=value`). */
  readonly kind: "flag" | "value";
  /** What the help shows after the option name (`SECONDS`, `URL`); value options only. */
  readonly arg?: string;
  /** One-letter alias (`-h`). */
  readonly short?: string;
  /** The option may be given more than once (every value is kept, in order). */
  readonly multiple?: boolean;
  /** The help line (may hold several lines; later ones are indented under the first). */
  readonly help: string;
  /** Not listed in the help (kept for compatibility). */
  readonly hidden?: boolean;
  /**
   * The value a command sees, from what the command line gave: the values given, in order (empty when
   * the option is absent; `["true"]` for a flag that is present). Throws a usage error naming the option.
   */
  readonly finish: (given: readonly string[], flag: string) => V;
}

/** A command's options by long name (without the dashes). */
export type OptionTable = Readonly<Record<string, Option<unknown>>>;

/** The parsed values of a table: one key per option, typed by its builder. */
export type Values<O extends OptionTable> = { -readonly [K in keyof O]: O[K] extends Option<infer V> ? V : never };

interface Common {
  readonly short?: string;
  readonly hidden?: boolean;
}

function last(given: readonly string[]): string | undefined {
  return given.length === 0 ? undefined : given[given.length - 1];
}

function build<V>(kind: "flag" | "value", arg: string | undefined, help: string, o: Common & { multiple?: boolean }, finish: (given: readonly string[], flag: string) => V): Option<V> {
  return {
    kind,
    ...(arg !== undefined ? { arg } : {}),
    ...(o.short !== undefined ? { short: o.short } : {}),
    ...(o.multiple ? { multiple: true } : {}),
    ...(o.hidden ? { hidden: true } : {}),
    help,
    finish,
  };
}

/** A flag: true when given. */
export function flag(help: string, o: Common = {}): Option<boolean> {
  return build("flag", undefined, help, o, (given) => given.length > 0);
}

type Scalar<T, O> = O extends { required: true } ? T : O extends { default: T } ? T : T | undefined;

/** Options of a single-valued option. */
export interface ValueOptions<T> extends Common {
  /** Without the option the value is this (the help says so when `help` does not). */
  readonly default?: T;
  /** The option must be given. */
  readonly required?: boolean;
}

/**
 * A value option whose text is checked and converted by `parse` (which throws a message; the
 * usage error names the option). The building block of every other value option.
 */
export function value<T, const O extends ValueOptions<T> = Record<never, never>>(arg: string, help: string, parse: (raw: string) => T, o?: O): Option<Scalar<T, O>> {
  const opts = (o ?? {}) as ValueOptions<T>;
  return build("value", arg, help, opts, (given, name) => {
    const raw = last(given);
    if (raw === undefined) {
      if (opts.required) throw usage(`--${name} ${arg} is required`, `--${name}`);
      return opts.default as Scalar<T, O>;
    }
    return parseOne(name, raw, parse) as Scalar<T, O>;
  });
}

/** A repeatable value option: every value, in order (empty when absent). */
export function values<T>(arg: string, help: string, parse: (raw: string) => T, o: Common = {}): Option<T[]> {
  return build("value", arg, help, { ...o, multiple: true }, (given, name) => given.map((raw) => parseOne(name, raw, parse)));
}

function parseOne<T>(name: string, raw: string, parse: (raw: string) => T): T {
  try {
    return parse(raw);
  } catch (e) {
    throw usage(`--${name} ${JSON.stringify(raw)}: ${e instanceof Error ? e.message : String(e)}`, `--${name}`);
  }
}

/** Any text (not empty). */
export function text<const O extends ValueOptions<string> = Record<never, never>>(arg: string, help: string, o?: O): Option<Scalar<string, O>> {
  return value(arg, help, nonEmpty, o);
}

/** Repeatable text. */
export function texts(arg: string, help: string, o: Common = {}): Option<string[]> {
  return values(arg, help, nonEmpty, o);
}

function nonEmpty(raw: string): string {
  if (raw === "") throw new Error("must not be empty");
  return raw;
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/**
 * A duration in seconds: `90`, `90s`, `1.5`, `500ms`, `15m`, `2h`, `1d`. Never negative; `min`
 * (default 0) is the smallest allowed.
 */
export function parseSeconds(raw: string, min = 0): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(raw.trim());
  if (!m) throw new Error("expected a duration: seconds (90), or with a unit (500ms, 90s, 15m, 2h, 1d)");
  const n = Number(m[1]) * UNIT_SECONDS[m[2] ?? "s"]!;
  if (n < min) throw new Error(`must be at least ${min} s`);
  return n;
}

/** A duration option (see {@link parseSeconds}); the value is in seconds. */
export function seconds<const O extends ValueOptions<number> & { min?: number } = Record<never, never>>(help: string, o?: O): Option<Scalar<number, O>> {
  const min = o?.min ?? 0;
  return value("SECONDS", help, (raw) => parseSeconds(raw, min), o);
}

/** An integer in [min, max] (default: 0 and up). */
export function parseCount(raw: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(raw.trim())) throw new Error(`expected a whole number${max < Number.MAX_SAFE_INTEGER ? ` ${min}-${max}` : min > 0 ? ` ≥ ${min}` : ""}`);
  const n = Number(raw);
  if (n < min || n > max) throw new Error(max < Number.MAX_SAFE_INTEGER ? `must be ${min}-${max}` : `must be at least ${min}`);
  return n;
}

/** A whole-number option. */
export function count<const O extends ValueOptions<number> & { min?: number; max?: number } = Record<never, never>>(arg: string, help: string, o?: O): Option<Scalar<number, O>> {
  return value(arg, help, (raw) => parseCount(raw, o?.min ?? 0, o?.max ?? Number.MAX_SAFE_INTEGER), o);
}

/** One of a fixed list; a value not in the list is a usage error that lists the valid ones. */
export function parseChoice<const C extends readonly string[]>(choices: C, raw: string): C[number] {
  if (!(choices as readonly string[]).includes(raw)) throw new Error(`expected one of ${choices.join(", ")}`);
  return raw as C[number];
}

/** An enumeration option. */
export function choice<const C extends readonly string[], const O extends ValueOptions<C[number]> = Record<never, never>>(arg: string, choices: C, help: string, o?: O): Option<Scalar<C[number], O>> {
  return value(arg, help, (raw) => parseChoice(choices, raw), o);
}

/** A repeatable enumeration option. */
export function choices<const C extends readonly string[]>(arg: string, list: C, help: string, o: Common = {}): Option<C[number][]> {
  return values(arg, help, (raw) => parseChoice(list, raw), o);
}

/** What {@link parseOptions} found. */
export interface Parsed<O extends OptionTable> {
  readonly values: Values<O>;
  readonly positionals: string[];
  /** `-h` or `--help` was given (nothing else was checked). */
  readonly help: boolean;
}

/** How a command takes positional arguments: how the help names them, and how many. */
export interface Positionals {
  /** As the usage line shows them: `SESSION`, `TEXT`, `[SOURCE…]`. */
  readonly names: string;
  readonly min: number;
  readonly max: number;
}

/**
 * Read a command line against an option table. `--name value`, `--name=value`, `-x value`; a value may
 * start with one dash (`--exclude -tmp-x/**`: Claude Code's project folders do), never with two (that
 * is a forgotten value). `--` ends the options. `-h`/`--help` anywhere before `--` asks for help and
 * skips every other check.
 */
export function parseOptions<O extends OptionTable>(table: O, argv: readonly string[], positionals: Positionals | undefined): Parsed<O> {
  const cut = argv.indexOf("--");
  const head = cut < 0 ? argv : argv.slice(0, cut);
  if (head.includes("--help") || head.includes("-h")) return { values: {} as Values<O>, positionals: [], help: true };
  const byShort = new Map<string, string>();
  for (const [name, o] of Object.entries(table)) if (o.short) byShort.set(o.short, name);
  const given = new Map<string, string[]>();
  const pos: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      pos.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      inline = eq < 0 ? undefined : a.slice(eq + 1);
    } else if (a.length === 2 && a[0] === "-" && a[1] !== "-") {
      name = byShort.get(a[1]!);
      if (name === undefined) throw usage(`unknown option ${a}`, a);
    } else {
      pos.push(a);
      continue;
    }
    const o = Object.hasOwn(table, name) ? table[name] : undefined;
    if (!o) throw usage(`unknown option --${name}`, `--${name}`);
    const list = given.get(name) ?? [];
    if (o.kind === "flag") {
      if (inline !== undefined) throw usage(`--${name} takes no value`, `--${name}`);
      list.push("true");
    } else {
      let v = inline;
      if (v === undefined) {
        const next = argv[i + 1];
        if (next === undefined || next.startsWith("--")) throw usage(`--${name} needs a value (${o.arg ?? "VALUE"})`, `--${name}`);
        v = next;
        i++;
      }
      if (!o.multiple && list.length > 0) throw usage(`--${name} given twice`, `--${name}`);
      list.push(v);
    }
    given.set(name, list);
  }
  const out: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(table)) out[name] = o.finish(given.get(name) ?? [], name);
  const p = positionals ?? { names: "", min: 0, max: 0 };
  if (pos.length > p.max) throw usage(p.max === 0 ? `unexpected argument ${JSON.stringify(pos[0])}` : `expected at most ${p.max} argument${p.max === 1 ? "" : "s"} (${p.names}), got ${pos.length}`);
  if (pos.length < p.min) throw usage(`expected ${p.names}`);
  return { values: out as Values<O>, positionals: pos, help: false };
}
