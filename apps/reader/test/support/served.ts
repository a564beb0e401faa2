// A real fleet for `serve`'s browser tests and bench: the Claude Code fixtures and the Codex and
// Gemini samples collected and pushed by the built lake-collector, compacted and snapshotted by the
// built lake-maint (with a promoted claim and a held lease), an intent declared through
// @lake/layout (plus two small transcripts: one holding secrets, one of a model with no price);
// and the built lake-reader serving it.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { declareIntent, openStore } from "@lake/layout";
import { copyFixture } from "@lake/testdata";
import { SAMPLES } from "./fixtures.js";

const COLLECTOR = fileURLToPath(new URL("../../../collector/bin/lake-collector.js", import.meta.url));
const MAINT = fileURLToPath(new URL("../../../maint/bin/lake-maint.js", import.meta.url));
/** The built lake-reader bin. */
export const READER = fileURLToPath(new URL("../../bin/lake-reader.js", import.meta.url));

/** The session of the fixtures with a child agent and many tool calls. */
export const FIXTURE_SESSION = "258c7280-ae70-4798-800f-63464d01a85d";

/** The hand-made session holding secrets (an AWS access key id, a PEM private key). */
export const SECRET_SESSION = "9d1c5e2a-5ec2-4e75-9c1a-2f7c4b1d0e11";

/**
 * Secrets made for the test (never real ones, never committed): an AWS access key id the
 * collector masks, and a private key that makes it quarantine the record.
 */
export function testSecrets(): { awsKeyId: string; pem: string } {
  const bytes = createHash("sha256").update("lake serve test secrets").digest();
  const b32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const awsKeyId = "AKIA" + [...bytes.subarray(0, 16)].map((b) => b32[b % 32]).join("");
  let body = "";
  for (let i = 0; body.length < 900; i++) body += createHash("sha512").update(`pem ${i}`).digest("base64");
  const lines = body.slice(0, 896).match(/.{1,64}/g)!.join("\n");
  return { awsKeyId, pem: `-----BEGIN RSA PRIVATE KEY-----\n${lines}\n-----END RSA PRIVATE KEY-----` };
}

/** A small Claude Code transcript: a turn whose prompt holds an AWS key id, one holding a private key. */
function secretTranscript(): string {
  const { awsKeyId, pem } = testSecrets();
  const base = { isSidechain: false, userType: "external", cwd: "/work/demo", sessionId: SECRET_SESSION, version: "2.1.38", gitBranch: "main" };
  const lines = [
    { ...base, parentUuid: null, type: "user", uuid: "b1f0c8a0-0000-4000-8000-000000000001", timestamp: "2026-02-12T09:00:00.000Z", message: { role: "user", content: `deploy with aws_access_key_id = ${awsKeyId} please` } },
    { ...base, parentUuid: "b1f0c8a0-0000-4000-8000-000000000001", type: "assistant", uuid: "b1f0c8a0-0000-4000-8000-000000000002", timestamp: "2026-02-12T09:00:05.000Z", requestId: "req_secret_1", message: { id: "msg_secret_1", role: "assistant", model: "claude-opus-4-6", content: [{ type: "text", text: "I will not echo that key; deploying with the configured profile." }], usage: { input_tokens: 12, output_tokens: 14 } } },
    { ...base, parentUuid: "b1f0c8a0-0000-4000-8000-000000000002", type: "user", uuid: "b1f0c8a0-0000-4000-8000-000000000003", timestamp: "2026-02-12T09:01:00.000Z", message: { role: "user", content: `and this key file:\n${pem}\n` } },
    { ...base, parentUuid: "b1f0c8a0-0000-4000-8000-000000000003", type: "assistant", uuid: "b1f0c8a0-0000-4000-8000-000000000004", timestamp: "2026-02-12T09:01:04.000Z", requestId: "req_secret_2", message: { id: "msg_secret_2", role: "assistant", model: "claude-opus-4-6", content: [{ type: "text", text: "Private keys do not belong in a prompt." }], usage: { input_tokens: 20, output_tokens: 9 } } },
  ];
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

/** A session whose model has no price, on a day with priced usage: that day and the totals are "$X + unpriced". */
export const UNPRICED_SESSION = "7e3b2f10-4c1d-4e8a-9b6f-0d2c5a8e1f33";

function unpricedTranscript(): string {
  const base = { isSidechain: false, userType: "external", cwd: "/work/demo", sessionId: UNPRICED_SESSION, version: "2.1.38", gitBranch: "main" };
  const lines = [
    { ...base, parentUuid: null, type: "user", uuid: "c2a1d9b0-0000-4000-8000-000000000001", timestamp: "2026-02-12T10:00:00.000Z", message: { role: "user", content: "summarise the release notes" } },
    { ...base, parentUuid: "c2a1d9b0-0000-4000-8000-000000000001", type: "assistant", uuid: "c2a1d9b0-0000-4000-8000-000000000002", timestamp: "2026-02-12T10:00:06.000Z", requestId: "req_unpriced_1", message: { id: "msg_unpriced_1", role: "assistant", model: "mystery-model-9", content: [{ type: "text", text: "Three fixes and one new flag." }], usage: { input_tokens: 1200, output_tokens: 340 } } },
  ];
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

/** A built fleet: its store URL, the collector's local root, and the reader's environment. */
export interface ServedFleet {
  readonly dir: string;
  readonly store: string;
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  /** The common options every reader command of this fleet takes. */
  readonly args: readonly string[];
}

function bin(file: string, name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): string {
  if (!existsSync(file.replace(/bin\/[^/]+$/, "dist/cli.js"))) throw new Error(`${name} is not built: run \`pnpm build\` first`);
  const r = spawnSync(process.execPath, [file, ...args], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  if (r.status !== 0) throw new Error(`${name} ${args.slice(0, 2).join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** Build the fleet under `dir`. */
export async function buildServedFleet(dir: string): Promise<ServedFleet> {
  const root = join(dir, "root");
  const fleet = join(dir, "fleet");
  const store = pathToFileURL(fleet).href;
  const claude = join(dir, "claude", "projects");
  mkdirSync(claude, { recursive: true });
  copyFixture("claude-code", claude);
  mkdirSync(join(claude, "-work-demo"), { recursive: true });
  writeFileSync(join(claude, "-work-demo", `${SECRET_SESSION}.jsonl`), secretTranscript());
  writeFileSync(join(claude, "-work-demo", `${UNPRICED_SESSION}.jsonl`), unpricedTranscript());
  const collector = (args: string[]) => bin(COLLECTOR, "lake-collector", args, { LAKE_AGENT: "host-t" });
  const maint = (args: string[]) => bin(MAINT, "lake-maint", [...args, "--store", store]);
  collector(["collect", "--root", root, "--sources-only", "--source", `claude-code=${claude}`, "--source", `codex=${join(SAMPLES, "codex")}`, "--source", `gemini=${join(SAMPLES, "gemini", "tmp")}`]);
  maint(["init", "--fleet-id", "f1"]);
  collector(["push", "--root", root, "--store", store, "--agent", "host-t", "--seal-idle", "1"]);
  maint(["seal", "--idle", "1"]);
  maint(["compact"]);
  maint(["propose", "--agent", "host-t", "--repo", "lake", "--subject", "parquet", "--text", "Segments are written by DuckDB with zstd compression"]);
  maint(["promote"]);
  maint(["snapshot"]);
  maint(["lease", "acquire", "--repo", "lake", "--resource", "apps/reader", "--owner", "host-t", "--ttl", "3600"]);
  const s = openStore(store);
  try {
    await declareIntent(s, { agent_id: "host-t", intents: [{ repo: "lake", resource: "apps/reader/src/internal/serve" }], note: "web UI", ttlSeconds: 3600 });
  } finally {
    s.close();
  }
  writeFileSync(join(dir, "built"), "");
  const env = { LAKE_READER_CACHE: join(dir, "cache"), HOME: dir };
  return { dir, store, root, env, args: ["--store", store, "--root", root] };
}

/** A running `lake-reader serve` child. */
export interface Served {
  readonly url: string;
  readonly child: ChildProcess;
  /** Milliseconds from spawn to the "listening" line. */
  readonly startMs: number;
  /** Resolves to the milliseconds from spawn to the "ready" line (what the first pages ask for is built). */
  readonly ready: Promise<number>;
  stop(): Promise<void>;
}

/** Spawn the built `lake-reader serve` with `args`; resolves once it prints its URL. */
export function startServe(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Served> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [READER, "serve", "--port", "0", ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  let readyAt: (ms: number) => void = () => undefined;
  const ready = new Promise<number>((r) => (readyAt = r));
  let listening = false;
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString();
      if (/serve: ready in \d+ ms/.test(out)) readyAt(performance.now() - t0);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m && !listening) {
        listening = true;
        resolve({
          url: m[1]!,
          child,
          startMs: performance.now() - t0,
          ready,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once("exit", () => done());
              child.kill("SIGTERM");
            }),
        });
      }
    });
    child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
    child.once("exit", (code) => reject(new Error(`lake-reader serve exited ${code} before listening: ${err.trim()}`)));
  });
}
