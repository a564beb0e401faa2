/** The `code` of a Node system error (`ENOENT`, `EEXIST`, …), or undefined. */
export function errno(e: unknown): string | undefined {
  if (typeof e === "object" && e !== null && "code" in e) {
    const c = (e as { code: unknown }).code;
    if (typeof c === "string") return c;
  }
  return undefined;
}
