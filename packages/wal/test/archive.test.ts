import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { findSession, inspectArchive, listArchive, readArchiveMember, writeArchive } from "../src/archive.js";
import { decodeWal, isWalError, walAddress, WalWriter } from "../src/index.js";
import { manifest, readHex, sha256, TRIPLE } from "./helpers.js";

afterAll(cleanupTempDirs);

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "resolved";
  } catch (e) {
    if (isWalError(e)) return e.code;
    throw e;
  }
}

describe("archive vectors", () => {
  for (const v of manifest.archive) {
    it(v.name, async () => {
      const bytes = readHex(v.file);
      expect(sha256(bytes)).toBe(v.sha256);
      const p = join(tempDir("wal-ark"), "fold-1.ark");
      writeFileSync(p, bytes);
      expect(await inspectArchive(p)).toEqual({ sealed: v.expect.sealed, members: v.expect.members });
      if (!v.expect.sealed) {
        expect(await code(listArchive(p))).toBe("Unsealed");
        expect(await code(readArchiveMember(p, "31a7840439280f40"))).toBe("Unsealed");
        return;
      }
      expect((await listArchive(p)).indexDamaged).toBe(v.expect.index_damaged);
      for (const m of v.expect.members) {
        if (m.sha256_ok) expect((await readArchiveMember(p, m.addr)).length).toBe(m.payload_len);
        else expect(await code(readArchiveMember(p, m.addr))).toBe("ArchiveCorrupt");
      }
      expect(readFileSync(p).equals(bytes)).toBe(true);
    });
  }
});

describe("archive containers", () => {
  it("write then read back byte-identical members; owner-only; the writer never replaces a container", async () => {
    const root = tempDir("wal-ark");
    const dir = join(root, "wal-archive");
    const a = readHex("record-v1.hex");
    const b = readHex("gated-steer.hex");
    const p = join(dir, "fold-100.ark");
    await writeArchive(p, [
      { addr: "0000000000000001", bytes: a },
      { addr: "0000000000000002", bytes: b },
      { addr: "0000000000000003", bytes: new Uint8Array(0) },
    ]);
    expect(statSync(p).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(Buffer.from(await readArchiveMember(p, "0000000000000002")).equals(b)).toBe(true);
    expect(decodeWal(await readArchiveMember(p, "0000000000000001")).records.length).toBe(2);
    expect((await readArchiveMember(p, "0000000000000003")).length).toBe(0);
    expect(await code(readArchiveMember(p, "00000000000000ff"))).toBe("NotFound");
    expect(await code(writeArchive(p, []))).toBe("Io");
    expect(await code(writeArchive(join(dir, "x.ark"), [{ addr: "A", bytes: a }]))).toBe("InvalidArgument");
    expect(
      await code(writeArchive(join(dir, "y.ark"), [{ addr: "0000000000000001", bytes: a }, { addr: "0000000000000001", bytes: a }])),
    ).toBe("InvalidArgument");
    // Damage the index: the header walk still finds every member.
    const bytes = readFileSync(p);
    const damaged = Buffer.from(bytes);
    damaged.writeUInt32LE(0xffff, damaged.length - 8);
    const q = join(dir, "fold-101.ark");
    writeFileSync(q, damaged);
    const l = await listArchive(q);
    expect(l.indexDamaged).toBe(true);
    expect(l.members.map((m) => m.addr)).toEqual(["0000000000000001", "0000000000000002", "0000000000000003"]);
    expect(Buffer.from(await readArchiveMember(q, "0000000000000001")).equals(a)).toBe(true);
  });
});

describe("live-first resolution", () => {
  const addr = walAddress(TRIPLE);

  it("live wins over archives, even at zero bytes; each live tree counts", async () => {
    for (const tree of ["wal", "wal-durable", "wal-ephemeral"]) {
      const root = tempDir("wal-res");
      await writeArchive(join(root, "wal-archive", "fold-5.ark"), [{ addr, bytes: readHex("record-v1.hex") }]);
      mkdirSync(join(root, tree), { recursive: true });
      writeFileSync(join(root, tree, `${addr}.wal`), "");
      expect(await findSession(root, TRIPLE)).toEqual({ addr, where: "live", path: join(root, tree, `${addr}.wal`), container: null });
    }
  });

  it("two live copies are an error", async () => {
    const root = tempDir("wal-res");
    for (const tree of ["wal", "wal-durable"]) {
      mkdirSync(join(root, tree), { recursive: true });
      writeFileSync(join(root, tree, `${addr}.wal`), "");
    }
    expect(await code(findSession(root, TRIPLE))).toBe("Ambiguous");
  });

  it("archives newest numeric stamp first, skipping unsealed containers and journals", async () => {
    const root = tempDir("wal-res");
    const dir = join(root, "wal-archive");
    await writeArchive(join(dir, "fold-9.ark"), [{ addr, bytes: readHex("record-v1.hex") }]);
    await writeArchive(join(dir, "fold-10.ark"), [{ addr, bytes: readHex("gated-steer.hex") }]);
    await writeArchive(join(dir, "fold-8.ark"), [{ addr: "0000000000000001", bytes: new Uint8Array(0) }]);
    // An unsealed newer container (interrupted fold) that holds the address is never read.
    writeFileSync(join(dir, "fold-11.ark"), readFileSync(join(dir, "fold-9.ark")).subarray(0, 100));
    writeFileSync(join(dir, "fold-12.journal"), "{}\n");
    const r = await findSession(root, TRIPLE);
    expect(r).toEqual({ addr, where: "archive", path: join(dir, "fold-10.ark"), container: "wal-archive/fold-10.ark" });
    expect(decodeWal(await readArchiveMember(r.path!, addr)).records[0]!.record.type).toBe("steered");
    // The durable archive tree is consulted too, by the same stamp order.
    await writeArchive(join(root, "wal-archive-durable", "fold-20.ark"), [{ addr, bytes: new Uint8Array(0) }]);
    expect((await findSession(root, TRIPLE)).container).toBe("wal-archive-durable/fold-20.ark");
  });

  it("two containers with one stamp are an error", async () => {
    const root = tempDir("wal-res");
    const dir = join(root, "wal-archive");
    await writeArchive(join(dir, "fold-10.ark"), [{ addr, bytes: new Uint8Array(0) }]);
    await writeArchive(join(dir, "fold-010.ark"), [{ addr, bytes: new Uint8Array(0) }]);
    expect(await code(findSession(root, TRIPLE))).toBe("Ambiguous");
  });

  it("absent when nowhere; the empty state root is fine", async () => {
    const root = tempDir("wal-res");
    expect(await findSession(root, TRIPLE)).toEqual({ addr, where: "absent", path: null, container: null });
    await writeArchive(join(root, "wal-archive", "fold-1.ark"), [{ addr: "0000000000000001", bytes: new Uint8Array(0) }]);
    expect((await findSession(root, TRIPLE)).where).toBe("absent");
  });

  it("an archived session restored by a writer resolves live", async () => {
    const root = tempDir("wal-res");
    await writeArchive(join(root, "wal-archive", "fold-1.ark"), [{ addr, bytes: new Uint8Array(0) }]);
    expect((await findSession(root, TRIPLE)).where).toBe("archive");
    const w = await WalWriter.open(join(root, "wal", `${addr}.wal`), { fsync: "always" });
    await w.close();
    expect((await findSession(root, TRIPLE)).where).toBe("live");
    rmSync(join(root, "wal", `${addr}.wal`));
    expect((await findSession(root, TRIPLE)).where).toBe("archive");
  });
});
