// --json output: one line of JSON whose object keys are snake_case in every app.

const CAMEL = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/;

/** `landedFiles` → `landed_files`; a key that is not camelCase (`source_gone`, a session id) is kept. */
export function snakeKey(key: string): string {
  return CAMEL.test(key) ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : key;
}

/** A copy of `value` with every object key in snake_case ({@link snakeKey}), at every depth. */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snakeKey(k), snakeKeys(v)]));
}

/** The `--json` line of a value: snake_case keys, newline-terminated. */
export function jsonLine(value: unknown): string {
  return JSON.stringify(snakeKeys(value)) + "\n";
}
