import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { KEY_FILE_NAME, RedactError, createRedactor, isRedactError, loadOrCreateKey, memoryKey } from "../src/index.js";

afterAll(cleanupTempDirs);

const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return isRedactError(e) ? e.code : `not a RedactError: ${String(e)}`;
  }
  return "no error";
};

describe("key file", () => {
  it("is created on first use with mode 0600 and the documented format, then reused", () => {
    const dir = join(tempDir("redact-key"), "root", "nested");
    const k1 = loadOrCreateKey(dir);
    const file = join(dir, KEY_FILE_NAME);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).toMatch(/^lake-redact-key v1\n[0-9a-f]{64}\n$/);
    const k2 = loadOrCreateKey(dir);
    expect(k2.equals(k1)).toBe(true);
    expect(k2.id).toBe(k1.id);
    expect(k1.source).toBe(file);
    expect(JSON.stringify(k1)).not.toContain(readFileSync(file, "utf8").slice(19, 83));
    expect(code(() => loadOrCreateKey(dir))).toBe("no error");
  });

  it("reads the golden key file and gives its documented id", () => {
    const dir = tempDir("redact-key");
    writeFileSync(join(dir, KEY_FILE_NAME), readFileSync(fileURLToPath(new URL("./vectors/redact.key", import.meta.url))), { mode: 0o600 });
    const k = loadOrCreateKey(dir);
    expect(k.equals(memoryKey("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"))).toBe(true);
    expect(k.id).toBe(memoryKey("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f").id);
  });

  it("refuses a corrupt key file without touching it", () => {
    const dir = tempDir("redact-key");
    const file = join(dir, KEY_FILE_NAME);
    writeFileSync(file, "lake-redact-key v1\nnot hex\n", { mode: 0o600 });
    expect(code(() => loadOrCreateKey(dir))).toBe("KeyCorrupt");
    expect(readFileSync(file, "utf8")).toBe("lake-redact-key v1\nnot hex\n");
    try {
      loadOrCreateKey(dir);
    } catch (e) {
      expect((e as RedactError).message).toContain(file);
      expect((e as RedactError).data.file).toBe(file);
    }
  });

  it("refuses a key file readable by group or others", () => {
    const dir = tempDir("redact-key");
    loadOrCreateKey(dir);
    chmodSync(join(dir, KEY_FILE_NAME), 0o644);
    expect(code(() => loadOrCreateKey(dir))).toBe("KeyPermissions");
  });

  it("refuses a directory in place of the key file, and an unwritable root", () => {
    const dir = tempDir("redact-key");
    mkdirSync(join(dir, KEY_FILE_NAME));
    expect(code(() => loadOrCreateKey(dir))).toBe("KeyPermissions");
    const file = join(tempDir("redact-key"), "plain-file");
    writeFileSync(file, "x");
    expect(code(() => loadOrCreateKey(join(file, "sub")))).toBe("KeyIo");
  });

  it("concurrent first use by several processes ends with one key", async () => {
    const dir = tempDir("redact-key");
    const entry = fileURLToPath(new URL("../dist/index.js", import.meta.url));
    const script = `import(${JSON.stringify(entry)}).then((m) => process.stdout.write(m.loadOrCreateKey(${JSON.stringify(dir)}).id))`;
    const ids = await Promise.all(
      Array.from({ length: 6 }, () =>
        new Promise<string>((resolve, reject) => {
          const p = spawn(process.execPath, ["-e", script]);
          let out = "";
          p.stdout.on("data", (d) => (out += d));
          p.on("exit", (c) => (c === 0 ? resolve(out) : reject(new Error(`exit ${c}`))));
        }),
      ),
    );
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toBe(loadOrCreateKey(dir).id);
  });

  it("memory keys: random by default, fixed from hex or bytes, validated", () => {
    expect(memoryKey().equals(memoryKey())).toBe(false);
    expect(memoryKey("ab".repeat(32)).equals(memoryKey(new Uint8Array(32).fill(0xab)))).toBe(true);
    expect(code(() => memoryKey("zz"))).toBe("InvalidOption");
    expect(code(() => memoryKey(new Uint8Array(16)))).toBe("InvalidOption");
  });

  it("a RedactError has its code, data and cause; the guard refuses an error that only looks like one", () => {
    // Across two real builds of the package: apps/reader/test/error-brands.test.ts.
    expect(isRedactError(Object.assign(new Error("x"), { code: "KeyIo", name: "RedactError" }))).toBe(false);
    expect(isRedactError(new Error("x"))).toBe(false);
    const e = new RedactError("KeyIo", "m", { data: { file: "k" }, cause: new Error("inner") });
    expect(isRedactError(e, "KeyIo") && e.cause).toBeInstanceOf(Error);
    expect(isRedactError(e, "KeyCorrupt")).toBe(false);
    expect(e.data.file).toBe("k");
  });

  it("masks follow the golden vectors for the golden key", () => {
    const vectors = JSON.parse(readFileSync(fileURLToPath(new URL("./vectors/masks.json", import.meta.url)), "utf8")) as { input: string; output: string }[];
    const red = createRedactor({ key: memoryKey("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f") });
    expect(vectors.length).toBeGreaterThan(3);
    for (const v of vectors) expect(red.redactString(v.input).value).toBe(v.output);
  });
});
