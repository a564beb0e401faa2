import { afterAll, describe, expect, it } from "vitest";
import { EXIT } from "@lake/cli";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { fixture } from "@lake/testdata";
import { run } from "./support/run.js";

afterAll(cleanupTempDirs);

/** @lake/wal's golden vectors (@lake/testdata wal/). */
const dir = fixture("wal");
const manifest = JSON.parse(readFileSync(join(dir, "vectors.json"), "utf8")) as {
  addresses: { project_root: string; harness: string; session: string; addr: string }[];
  wal: { name: string; file: string; expect: { status: string; lineage_id: string | null; torn_tail: boolean; records: unknown[]; skipped: unknown[] } }[];
  archive: { name: string; file: string; expect: { sealed: boolean; members: { addr: string; payload_len: number; sha256_ok: boolean }[] } }[];
};
const hex = (f: string) => Buffer.from(readFileSync(join(dir, f), "utf8").replace(/\s+/g, ""), "hex");

describe("lake-reader wal (issue 3 CLI contract) on @lake/wal's golden vectors", () => {
  const tmp = tempDir("reader-wal");

  for (const v of manifest.wal) {
    it(`wal inspect ${v.name} → ${v.expect.status}`, async () => {
      const file = join(tmp, `${v.name}.wal`);
      writeFileSync(file, hex(v.file));
      const r = await run(["wal", "inspect", file, "--json"]);
      const want = v.expect.status === "ok" ? EXIT.ok : v.expect.status === "newer_writer" ? EXIT.refused : EXIT.corrupt;
      expect(r.code, r.err).toBe(want);
      const j = JSON.parse(r.out) as Record<string, unknown>;
      expect(Object.keys(j).sort()).toEqual(["error", "file", "lineage_id", "records", "skipped", "status", "torn_tail"]);
      expect(j).toMatchObject({ file, status: v.expect.status, records: v.expect.records, skipped: v.expect.skipped });
      if (v.expect.status === "ok") expect(j).toMatchObject({ torn_tail: v.expect.torn_tail, lineage_id: v.expect.lineage_id, error: null });
      else expect(typeof j.error).toBe("string");
      const human = await run(["wal", "inspect", file]);
      expect(human.code).toBe(want);
      expect(human.out).toContain(v.expect.status);
    });
  }

  for (const v of manifest.archive) {
    it(`wal archive ${v.name}`, async () => {
      const file = join(tmp, `${v.name}.ark`);
      writeFileSync(file, hex(v.file));
      const r = await run(["wal", "archive", file, "--json"]);
      expect(JSON.parse(r.out)).toEqual({ sealed: v.expect.sealed, members: v.expect.members });
      expect(r.code).toBe(v.expect.sealed && v.expect.members.every((m) => m.sha256_ok) ? EXIT.ok : EXIT.corrupt);
    });
  }

  it("wal addr prints the pinned addresses; a U+001F field is refused with exit 2", async () => {
    for (const a of manifest.addresses) {
      const r = await run(["wal", "addr", a.project_root, a.harness, a.session]);
      expect(r).toMatchObject({ code: 0, out: `${a.addr}\n` });
    }
    const bad = await run(["wal", "addr", "/tmp/p\u001f", "runner", "s1"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/U\+001F/);
  });

  it("wal find resolves live first, then absent", async () => {
    const root = join(tmp, "state");
    const addr = manifest.addresses[0]!;
    const absent = await run(["wal", "find", "--state-root", root, addr.project_root, addr.harness, addr.session, "--json"]);
    expect(absent.code, absent.err).toBe(0);
    expect(JSON.parse(absent.out)).toEqual({ addr: addr.addr, where: "absent", path: null, container: null });
    mkdirSync(join(root, "wal"), { recursive: true });
    const live = join(root, "wal", `${addr.addr}.wal`);
    writeFileSync(live, hex(manifest.wal.find((w) => w.expect.status === "ok" && w.expect.records.length > 0)!.file));
    const found = await run(["wal", "find", "--state-root", root, addr.project_root, addr.harness, addr.session, "--json"]);
    expect(JSON.parse(found.out)).toEqual({ addr: addr.addr, where: "live", path: live, container: null });
    expect((await run(["wal", "find", addr.project_root, addr.harness, addr.session])).code).toBe(2);
  });

  it("a missing file exits 8 with a one-line error naming it", async () => {
    const r = await run(["wal", "inspect", join(tmp, "nope.wal"), "--json"]);
    expect(r.code).toBe(EXIT.notFound);
    expect(r.err).toMatch(/nope\.wal/);
    expect(r.err.trim().split("\n").length).toBe(1);
  });
});
