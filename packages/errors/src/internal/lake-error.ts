/**
 * The one error shape of lake. Every package and app has one error class, made by
 * {@link defineError}: a string-literal `code` from the package's union, `data` typed per code, an
 * ES2022 `cause`, and a brand that a guard made by {@link brandGuard} checks. The brand is a
 * global symbol (`Symbol.for`), so an error thrown by one copy of a package is recognised by the
 * guard of another copy (two versions installed side by side, or a bundled and an unbundled
 * build), where `instanceof` is not.
 */

/** The key every lake error carries; its value is the error's brand, `"<package>/<ClassName>"`. */
const LAKE = Symbol.for("@lake/errors/LakeError");

/**
 * The typed detail of each code of a package: one object type per code. A package whose codes all
 * carry the same facts writes it as `ErrorDataMap<Code, Facts>`; one with facts per code writes an
 * interface with a member per code.
 */
export type ErrorDataMap<Code extends string, Facts extends object = object> = { readonly [C in Code]: Facts };

/** What a lake error is made with besides its code and message. */
export interface LakeErrorOptions<Data extends object> {
  /** Facts about the failure (the file concerned, …), typed per code; never a secret. `{}` when absent. */
  readonly data?: Data;
  /** The underlying error (ES2022 `cause`); left unset when undefined. */
  readonly cause?: unknown;
}

/**
 * The base class of every lake error class. A package does not subclass it by hand: it extends the
 * class {@link defineError} makes for its brand, its code union and its per-code data map. The
 * error's `name` is the last part of the brand (`ThingError`).
 */
export abstract class LakeError<Code extends string = string, Data extends object = object> extends Error {
  /** What went wrong, one of the package's string-literal codes. */
  readonly code: Code;
  /** Facts about the failure, typed per code. */
  readonly data: Data;

  /**
   * @param brand `"<package>/<ClassName>"`, the same string in every copy and version of the package.
   * @param code what went wrong.
   * @param message one line naming the file (or key, option …) and the reason.
   */
  protected constructor(brand: string, code: Code, message: string, options: LakeErrorOptions<Data> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = brand.slice(brand.lastIndexOf("/") + 1);
    this.code = code;
    this.data = options.data ?? ({} as Data);
    Object.defineProperty(this, LAKE, { value: brand });
    Object.defineProperty(this, Symbol.for(brand), { value: true });
  }
}

/**
 * What {@link defineError} makes: an error class of one brand, constructed as
 * `new (code, message, { data, cause })` with `data` typed by the code.
 */
export interface LakeErrorClass<Code extends string, Data extends ErrorDataMap<Code>> {
  new <C extends Code = Code>(code: C, message: string, options?: LakeErrorOptions<Data[C]>): LakeError<C, Data[C]>;
  /** `"<package>/<ClassName>"`: what {@link brandGuard} is made with. */
  readonly brand: string;
}

/**
 * The base of a package's one error class: a package extends it in one line and makes its guard
 * from the brand.
 *
 * ```ts
 * import { brandGuard, defineError } from "@lake/errors";
 *
 * type ThingErrorCode = "NotFound" | "Corrupt";
 * interface ThingErrorData { readonly NotFound: { readonly file?: string }; readonly Corrupt: { readonly file?: string; readonly offset?: number } }
 *
 * class ThingError<C extends ThingErrorCode = ThingErrorCode> extends defineError<ThingErrorCode, ThingErrorData>("@example/thing/ThingError")<C> {}
 * const isThingError = brandGuard<ThingError, ThingErrorData>(ThingError.brand);
 *
 * const e: unknown = new ThingError("Corrupt", "t.bin: bad digest at byte 12", { data: { file: "t.bin", offset: 12 } });
 * if (isThingError(e, "Corrupt")) console.log(e.data.offset);
 * ```
 *
 * A class that says more (its own constructor, a field) declares it in the subclass and calls
 * `super(code, message, options)`.
 *
 * @param brand `"<package>/<ClassName>"`, the same string in every copy and version of the package.
 */
export function defineError<Code extends string, Data extends ErrorDataMap<Code>>(brand: string): LakeErrorClass<Code, Data> {
  return class extends LakeError<Code, Data[Code]> {
    static readonly brand = brand;
    constructor(code: Code, message: string, options?: LakeErrorOptions<Data[Code]>) {
      super(brand, code, message, options);
    }
  } as LakeErrorClass<Code, Data>;
}

/** True for an error of any lake package or app, from any copy of it. */
export function isLakeError(e: unknown): e is LakeError {
  return typeof e === "object" && e !== null && typeof (e as Record<symbol, unknown>)[LAKE] === "string";
}

/** The brand of a lake error (`"@lake/store/StoreError"`), or undefined for any other value. */
export function brandOf(e: unknown): string | undefined {
  if (typeof e !== "object" || e === null) return undefined;
  const brand = (e as Record<symbol, unknown>)[LAKE];
  return typeof brand === "string" ? brand : undefined;
}

/**
 * A package's guard: `guard(e)` is true for an error of that brand from any copy of the package;
 * `guard(e, code)` also requires the code, and narrows `data` to that code's type.
 */
export type BrandGuard<E extends LakeError, Data extends ErrorDataMap<E["code"]>> = <C extends E["code"] = E["code"]>(
  e: unknown,
  code?: C,
) => e is E & { readonly code: C; readonly data: Data[C] };

/** Make the guard of one brand (see {@link defineError}). */
export function brandGuard<E extends LakeError, Data extends ErrorDataMap<E["code"]>>(brand: string): BrandGuard<E, Data> {
  const key = Symbol.for(brand);
  return <C extends E["code"] = E["code"]>(e: unknown, code?: C): e is E & { readonly code: C; readonly data: Data[C] } =>
    typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[key] === true && (code === undefined || (e as LakeError).code === code);
}
