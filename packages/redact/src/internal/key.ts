import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { installNoReplace } from "@lake/durable";
import { join } from "node:path";
import { RedactError } from "./errors.js";

/** File name of the masking key inside the local root. */
export const KEY_FILE_NAME = "redact.key";
const HEADER = "lake-redact-key v1\n";
const KEY_RE = /^lake-redact-key v1\n([0-9a-f]{64})\n$/;

const bytesOf = new WeakMap<RedactKey, Buffer>();

/**
 * An HMAC-SHA256 masking key. Opaque: the bytes never leave the object; `id` is a public
 * fingerprint (first 8 hex of HMAC(key, "lake-redact-key-id")) safe to log.
 */
export class RedactKey {
  /** Public fingerprint of the key, 8 hex. */
  readonly id: string;
  /** Where the key came from: the key file path, or `"memory"`. */
  readonly source: string;

  /** @internal Use {@link loadOrCreateKey} or {@link memoryKey}. */
  constructor(bytes: Uint8Array, source: string) {
    if (bytes.length !== 32) throw new RedactError("InvalidOption", `redact key: expected 32 bytes, got ${bytes.length}`);
    const b = Buffer.from(bytes);
    bytesOf.set(this, b);
    this.source = source;
    this.id = createHmac("sha256", b).update("lake-redact-key-id").digest("hex").slice(0, 8);
  }

  /** True when both keys hold the same bytes. */
  equals(other: RedactKey): boolean {
    return timingSafeEqual(keyBytes(this), keyBytes(other));
  }

  /** Keeps the bytes out of `JSON.stringify` and `util.inspect`. */
  toJSON(): { id: string; source: string } {
    return { id: this.id, source: this.source };
  }
}

/** @internal The raw bytes of a key (for HMAC). */
export function keyBytes(k: RedactKey): Buffer {
  const b = bytesOf.get(k);
  if (!b) throw new RedactError("InvalidOption", "redact key: not a key made by @lake/redact");
  return b;
}

/**
 * An in-memory key (tests, one-shot tools). With no argument it is random; with 32 bytes or 64
 * hex characters it is that key (for reproducible masks).
 */
export function memoryKey(material?: Uint8Array | string): RedactKey {
  if (material === undefined) return new RedactKey(randomBytes(32), "memory");
  if (typeof material === "string") {
    if (!/^[0-9a-fA-F]{64}$/.test(material)) throw new RedactError("InvalidOption", "redact key: expected 64 hex characters");
    return new RedactKey(Buffer.from(material, "hex"), "memory");
  }
  return new RedactKey(material, "memory");
}

function parseKeyFile(file: string, text: string): RedactKey {
  const m = KEY_RE.exec(text);
  if (!m) throw new RedactError("KeyCorrupt", `${file}: not a lake redact key (expected "lake-redact-key v1" and 64 hex)`, { data: { file } });
  return new RedactKey(Buffer.from(m[1]!, "hex"), file);
}

function readExisting(file: string): RedactKey {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (e) {
    throw new RedactError("KeyIo", `${file}: cannot open key file (${(e as NodeJS.ErrnoException).code ?? "error"})`, { data: { file }, cause: e });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new RedactError("KeyPermissions", `${file}: key file is not a regular file`, { data: { file } });
    if (process.platform !== "win32" && (st.mode & 0o077) !== 0) {
      throw new RedactError("KeyPermissions", `${file}: key file mode ${(st.mode & 0o777).toString(8)} is open to group/others (want 600)`, { data: { file } });
    }
    return parseKeyFile(file, readFileSync(fd, "utf8"));
  } finally {
    closeSync(fd);
  }
}

/**
 * Load the masking key of a local root, creating it on first use: `<dir>/redact.key`, mode 0600,
 * contents `lake-redact-key v1\n<64 hex>\n`. Creation is race-safe (written to a temporary file
 * and hard-linked into place without replacing; a concurrent creator's key wins and is read back).
 * An existing key is never rewritten.
 *
 * @throws RedactError `KeyCorrupt`, `KeyPermissions` or `KeyIo`.
 */
export function loadOrCreateKey(dir: string): RedactKey {
  const file = join(dir, KEY_FILE_NAME);
  let exists = true;
  try {
    lstatSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new RedactError("KeyIo", `${file}: cannot stat key file (${(e as NodeJS.ErrnoException).code ?? "error"})`, { data: { file }, cause: e });
    }
    exists = false;
  }
  if (exists) return readExisting(file);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new RedactError("KeyIo", `${dir}: cannot create key directory (${(e as NodeJS.ErrnoException).code ?? "error"})`, { data: { file }, cause: e });
  }
  const tmp = join(dir, `.${KEY_FILE_NAME}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const text = HEADER + randomBytes(32).toString("hex") + "\n";
  try {
    // temp (0600), fsync, link without replacing, fsync the directory; a racing creator's key wins and is read back
    installNoReplace(file, text, { temp: tmp, mode: 0o600, label: "key" });
  } catch (e) {
    throw new RedactError("KeyIo", `${file}: cannot create key file (${(e as NodeJS.ErrnoException).code ?? "error"})`, { data: { file }, cause: e });
  }
  return readExisting(file);
}
