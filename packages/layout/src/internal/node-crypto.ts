import { createRequire } from "node:module";

type NodeCrypto = typeof import("node:crypto");
let crypto: NodeCrypto | undefined;

/**
 * node:crypto, loaded by the first hash rather than with the modules that hash: loading it (and the
 * streams it loads) is some 5 ms of a process's start, which a program that reads a config file,
 * opens a store or decodes fleet objects need not pay, nor a push or collect that finds nothing new.
 */
export function nodeCrypto(): NodeCrypto {
  return (crypto ??= createRequire(import.meta.url)("node:crypto") as NodeCrypto);
}
