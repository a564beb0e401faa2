// @lake/store benchmarks.
// 1. A no-op pass over 1,000 unchanged sources (10 sessions × 100 append sources; goal ≤ 50 ms),
//    against a baseline of the least such a pass must do: stat every source and read every cursor.
// 2. Landing throughput: a pass that reads, splits, converts and lands a growing source, as a
//    ratio to a raw write + fsync of the same landed bytes in the same number of files, and to a
//    raw write of the same bytes with the store's fsync policy (directory and cursor per file).
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { mkdtempSync } from "node:fs";
import { line, measure, report, scale } from "@lake/tooling/bench";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { openSession, readIndex, type Convert, type SourceRef } from "../src/index.js";

const base = mkdtempSync(join(tmpdir(), "store-bench-"));
const passthrough: Convert = (lines) => lines.map((l) => l.value as never);

function ref(path: string, stream: string): SourceRef {
  return { path, source: path.slice(base.length + 1), stream, kind: "transcript", runtime: "bench", adapter: "bench", adapterVersion: "1" };
}

async function noopBench(): Promise<void> {
  const sources = Math.max(10, Math.round(1000 * scale()));
  const sessions = 10;
  const per = Math.ceil(sources / sessions);
  const root = join(base, "noop-root");
  const src = join(base, "noop-src");
  const bySession: SourceRef[][] = [];
  for (let s = 0; s < sessions; s++) {
    const list: SourceRef[] = [];
    mkdirSync(join(src, `s${s}`), { recursive: true });
    for (let i = 0; i < per; i++) {
      const p = join(src, `s${s}`, `a${i}.jsonl`);
      let body = "";
      for (let k = 0; k < 5; k++) body += JSON.stringify({ type: "user", uuid: `s${s}-${i}-${k}`, text: "x".repeat(200) }) + "\n";
      const fd = openSync(p, "w");
      writeSync(fd, body);
      closeSync(fd);
      list.push(ref(p, `a${i}`));
    }
    bySession.push(list);
  }
  const pass = async () => {
    for (let s = 0; s < sessions; s++) {
      const ss = await openSession(root, `s${s}`);
      const p = ss.beginPass();
      for (const r of bySession[s]!) await p.collectAppend(r, passthrough);
      const sum = p.finish();
      if (sum.landed && sum.landed !== per) throw new Error("unexpected landing");
      ss.close();
    }
  };
  await pass(); // first collection lands everything
  const baseline = await measure("stat sources + read cursors", () => {
    for (let s = 0; s < sessions; s++) {
      for (const r of bySession[s]!) {
        statSync(r.path);
        readFileSync(join(root, `s${s}`, "streams", r.stream, "transcript.cursor"), "utf8");
      }
    }
  }, { runs: 9, warmup: 2 });
  const cold = await measure(`no-op pass, ${sessions * per} sources (open+lock each session)`, pass, { runs: 9, warmup: 2 });
  const open = await Promise.all(Array.from({ length: sessions }, (_, s) => openSession(root, `s${s}`)));
  const warm = await measure(`no-op pass, ${sessions * per} sources (sessions kept open, watch)`, async () => {
    for (let s = 0; s < sessions; s++) {
      const p = open[s]!.beginPass();
      for (const r of bySession[s]!) await p.collectAppend(r, passthrough);
      p.finish();
    }
  }, { runs: 9, warmup: 2 });
  for (const o of open) o.close();
  report("no-op pass over unchanged sources", baseline, [cold, warm], [`goal: ≤ 50 ms for 1,000 sources; measured ${cold.medianMs.toFixed(1)} ms (cold), ${warm.medianMs.toFixed(1)} ms (warm)`]);
}

async function landBench(): Promise<void> {
  const bytes = Math.round(32 * 1024 * 1024 * scale());
  const dir = join(base, "corpus");
  const corpus = await generateClaudeCorpus({ dir, bytes, sessionBytes: bytes + 1, seed: 7 });
  const file = corpus.files[0]!;
  const size = statSync(file).size;
  let landedBytes = 0;
  let landedFiles = 0;
  let run = 0;
  const land = (index: boolean) => async () => {
    const root = join(base, `land-root-${run++}`);
    const s = await openSession(root, "s");
    const p = s.beginPass();
    const o = await p.collectAppend(ref(file, "main"), passthrough);
    p.finish({ index });
    s.close();
    landedBytes = o.landed.reduce((a, f) => a + f.bytes, 0);
    landedFiles = o.landed.length;
    rmSync(root, { recursive: true, force: true });
  };
  await land(false)();
  // Baseline: the same number of files holding the same bytes, each written and fsynced, the directory fsynced.
  const payload = Buffer.alloc(Math.ceil(landedBytes / landedFiles), 0x61);
  // The baselines' plain syscalls: a file written and fsynced, a directory fsynced.
  const writeSynced = (path: string, data: Buffer, flag: string) => {
    const fd = openSync(path, flag);
    writeSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
  };
  const dirSync = (d: string) => {
    const dfd = openSync(d, "r");
    fsyncSync(dfd);
    closeSync(dfd);
  };
  const raw = async () => {
    const d = join(base, `raw-${run++}`);
    mkdirSync(d);
    for (let i = 0; i < landedFiles; i++) writeSynced(join(d, `f${i}`), payload, "wx");
    dirSync(d);
    rmSync(d, { recursive: true, force: true });
  };
  // The same bytes with the store's fsync policy: per file, write + fsync + directory fsync (it must be
  // durable before its cursor), then a cursor-sized file written, fsynced, renamed over, directory fsynced.
  const cursorBytes = Buffer.alloc(400, 0x62);
  const rawPolicy = async () => {
    const d = join(base, `rawp-${run++}`);
    mkdirSync(d);
    for (let i = 0; i < landedFiles; i++) {
      writeSynced(join(d, `f${i}`), payload, "wx");
      dirSync(d);
      writeSynced(join(d, "c.tmp"), cursorBytes, "w");
      renameSync(join(d, "c.tmp"), join(d, "c"));
      dirSync(d);
    }
    rmSync(d, { recursive: true, force: true });
  };
  const baseline = await measure("raw write + fsync of the same bytes", raw, { runs: 5, bytes: landedBytes });
  const policy = await measure("raw, the store's fsync policy (+dir, +cursor per file)", rawPolicy, { runs: 5, bytes: landedBytes });
  const subject = await measure("collectAppend: read, split, convert, land, cursor", land(false), { runs: 5, bytes: landedBytes });
  const withIndex = await measure("… and updateIndex", land(true), { runs: 5, bytes: landedBytes });
  report("landing throughput", baseline, [policy, subject, withIndex], [
    `source ${(size / 1e6).toFixed(1)} MB, ${corpus.lines} lines; landed ${(landedBytes / 1e6).toFixed(1)} MB in ${landedFiles} files (2 MiB windows)`,
    `ratio to raw with the same fsync policy: ${(policy.medianMs / subject.medianMs).toFixed(2)}x (collect), ${(policy.medianMs / withIndex.medianMs).toFixed(2)}x (with index)`,
  ]);
  const s = await openSession(join(base, "idx"), "s");
  const p = s.beginPass();
  await p.collectAppend(ref(file, "main"), passthrough);
  p.finish();
  s.close();
  line("index entries for the source", String(readIndex(join(base, "idx"), "s").entries.length));
}

try {
  await noopBench();
  await landBench();
} finally {
  rmSync(base, { recursive: true, force: true });
}
