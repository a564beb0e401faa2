import { spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { parse } from "@lake/chain";
import { tempDir } from "@lake/tooling/tmp";
import { collect, completeSource, partialSource } from "./store-session.js";

const CHILD = new URL("../bin/chain-child.mjs", import.meta.url).pathname;

/** The outcome of a child process. */
export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: { published?: string | null; error?: string } | null;
  stderr: string;
}

/** Run the chain child with `args`; resolves when it exits (killed or not). */
export function runChild(args: string[]): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CHILD, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    p.on("error", reject);
    p.on("close", (code, signal) => {
      const line = out.trim().split("\n").pop();
      resolve({ code, signal, out: line ? (JSON.parse(line) as ChildResult["out"]) : null, stderr: err });
    });
  });
}

/**
 * A root where the fixture session has round 1 published (the first `first` lines of the main transcript) and the
 * index has moved on (lines up to `last`, default all, landed): the next parse publishes round 2.
 */
export async function rootWithPendingRound(first = 800, last?: number): Promise<string> {
  const root = tempDir("chain-tpl");
  const src = tempDir("chain-tpl-src");
  partialSource(src, first);
  await collect(root, src);
  await parse(root, (await import("./store-session.js")).SESSION);
  completeSource(src, first, last);
  await collect(root, src);
  return root;
}

/** A fresh copy of a template root. */
export function copyRoot(template: string, label: string): string {
  const dst = join(tempDir(label), "root");
  cpSync(template, dst, { recursive: true });
  return dst;
}
