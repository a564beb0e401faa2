// The chain's file calls, in the shape of `fs.promises` but made synchronously: a chain's files are
// small (a round, conversation.state, a directory of rounds) and a pass reads them one after
// another, so a libuv thread-pool round trip per call cost more than the call did (a collect pass
// that published rounds for 10 sessions took some 30 ms longer, its thread idle meanwhile).
import { mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, unlinkSync, type BigIntStats, type Stats } from "node:fs";

function now<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (e) {
    return Promise.reject(e);
  }
}

export const fsp = {
  readdir: (path: string): Promise<string[]> => now(() => readdirSync(path)),
  stat: (path: string): Promise<Stats> => now(() => statSync(path)),
  statBig: (path: string): Promise<BigIntStats> => now(() => statSync(path, { bigint: true })),
  readFile: (path: string): Promise<Buffer> => now(() => readFileSync(path)),
  readText: (path: string): Promise<string> => now(() => readFileSync(path, "utf8")),
  mkdirs: (path: string): Promise<void> => now(() => void mkdirSync(path, { recursive: true })),
  unlink: (path: string): Promise<void> => now(() => unlinkSync(path)),
  rmdir: (path: string): Promise<void> => now(() => rmdirSync(path)),
};
