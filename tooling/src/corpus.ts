// Generated Claude Code corpora for benchmarks: a `projects/` tree of realistic JSONL sessions
// (user prompts, streamed assistant responses that repeat message.id + requestId with growing
// output_tokens, tool_use / tool_result pairs, progress rows), deterministic for a given seed.
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { once } from "node:events";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { mersenne } from "pure-rand/generator/mersenne";

/** A deterministic PRNG (pure-rand's Mersenne Twister), returning floats in [0, 1). */
export function rng(seed: number): () => number {
  const g = mersenne(seed);
  return () => uniformFloat64(g);
}

const WORDS =
  "the of and to in is that for it with as was on be by this are from at or an have not which but all were when we there can more if will one about up out them so what into has time only could new some these two may first then do any like now its over such our even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three".split(
    " ",
  );

function uuid(r: () => number): string {
  const h = () => Math.floor(r() * 16).toString(16);
  let s = "";
  for (let i = 0; i < 32; i++) s += h();
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-a${s.slice(17, 20)}-${s.slice(20, 32)}`;
}

function words(r: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]!);
  return out.join(" ");
}

export interface CorpusOptions {
  /** Root directory; sessions land under `<dir>/projects/<project>/<session>.jsonl`. */
  readonly dir: string;
  /** Approximate total bytes to write. */
  readonly bytes: number;
  /** Approximate bytes per session file (default 4 MiB). */
  readonly sessionBytes?: number;
  readonly seed?: number;
  /** First timestamp (default 2026-01-01T00:00:00Z); sessions start over the `days` after it. */
  readonly start?: Date;
  /** Days the sessions' starts are spread over (default 30); 1 puts them all in one day's partition. */
  readonly days?: number;
}

export interface CorpusResult {
  readonly files: string[];
  readonly bytes: number;
  readonly lines: number;
}

/** Write a Claude Code corpus of about `bytes` bytes. */
export async function generateClaudeCorpus(opts: CorpusOptions): Promise<CorpusResult> {
  const r = rng(opts.seed ?? 1);
  const sessionBytes = opts.sessionBytes ?? 4 * 1024 * 1024;
  const start = (opts.start ?? new Date("2026-01-01T00:00:00Z")).getTime();
  const files: string[] = [];
  let total = 0;
  let lines = 0;
  let sessionNo = 0;
  while (total < opts.bytes) {
    const project = `-home-dev-project-${sessionNo % 7}`;
    const sessionId = uuid(r);
    const dir = join(opts.dir, "projects", project);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${sessionId}.jsonl`);
    const out = createWriteStream(file);
    let t = start + Math.floor(r() * (opts.days ?? 30) * 86400_000);
    let written = 0;
    let parent: string | null = null;
    const base = { isSidechain: false, userType: "external", cwd: `/home/dev/${project}`, sessionId, version: "2.1.38", gitBranch: "main" };
    const emit = async (obj: Record<string, unknown>) => {
      const line = JSON.stringify(obj) + "\n";
      written += Buffer.byteLength(line);
      lines++;
      if (!out.write(line)) await once(out, "drain");
    };
    const budget = Math.min(sessionBytes, opts.bytes - total);
    while (written < budget) {
      t += 1000 + Math.floor(r() * 20_000);
      const userId = uuid(r);
      await emit({ parentUuid: parent, ...base, type: "user", message: { role: "user", content: words(r, 10 + Math.floor(r() * 40)) }, uuid: userId, timestamp: new Date(t).toISOString() });
      parent = userId;
      const steps = 1 + Math.floor(r() * 4);
      for (let s = 0; s < steps; s++) {
        const msgId = `msg_${uuid(r).replace(/-/g, "").slice(0, 24)}`;
        const reqId = `req_${uuid(r).replace(/-/g, "").slice(0, 24)}`;
        const toolId = `toolu_${uuid(r).replace(/-/g, "").slice(0, 24)}`;
        const usage = { input_tokens: 3 + Math.floor(r() * 50), cache_creation_input_tokens: Math.floor(r() * 5000), cache_read_input_tokens: Math.floor(r() * 60000), output_tokens: 0, service_tier: "standard" };
        const text = words(r, 20 + Math.floor(r() * 200));
        const chunks = 1 + Math.floor(r() * 3);
        for (let c = 0; c < chunks; c++) {
          t += 200 + Math.floor(r() * 3000);
          const id = uuid(r);
          usage.output_tokens += 5 + Math.floor(r() * 300);
          const content = c === chunks - 1
            ? [{ type: "tool_use", id: toolId, name: ["Bash", "Read", "Edit", "Grep"][Math.floor(r() * 4)], input: { command: `ls ${words(r, 2)}`, description: words(r, 5) } }]
            : [{ type: "text", text }];
          await emit({ parentUuid: parent, ...base, message: { model: r() < 0.8 ? "claude-opus-4-6" : "claude-sonnet-4-5-20250929", id: msgId, type: "message", role: "assistant", content, stop_reason: null, stop_sequence: null, usage: { ...usage } }, requestId: reqId, type: "assistant", uuid: id, timestamp: new Date(t).toISOString() });
          parent = id;
        }
        t += 100 + Math.floor(r() * 5000);
        const resId = uuid(r);
        const output = words(r, 30 + Math.floor(r() * 600));
        await emit({ parentUuid: parent, ...base, type: "user", message: { role: "user", content: [{ tool_use_id: toolId, type: "tool_result", content: output, is_error: r() < 0.05 }] }, uuid: resId, timestamp: new Date(t).toISOString(), toolUseResult: { stdout: output, stderr: "", interrupted: false, isImage: false } });
        parent = resId;
        if (r() < 0.3) {
          await emit({ parentUuid: parent, ...base, type: "progress", data: { type: "hook_progress", hookEvent: "PostToolUse", hookName: "PostToolUse:Bash", command: "true" }, parentToolUseID: toolId, toolUseID: toolId, timestamp: new Date(t).toISOString(), uuid: uuid(r) });
        }
      }
    }
    out.end();
    await once(out, "finish");
    files.push(file);
    total += written;
    sessionNo++;
  }
  return { files, bytes: total, lines };
}
