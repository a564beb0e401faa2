import { statSync } from "node:fs";
import { hostname } from "node:os";
import { configuredAgent, defaultLocalRoot } from "@lake/layout/defaults";
import { flag, text } from "@lake/cli";
import { CollectorError } from "./errors.js";

/** --root DIR: the local storage root. */
export const ROOT = text("DIR", "the local storage root (default $LAKE_ROOT, else $XDG_DATA_HOME/lake, else ~/.local/share/lake)");

/** --json. */
export const JSON_FLAG = flag("print a JSON object instead of text");

/**
 * The local storage root: --root, else @lake/layout's default ($LAKE_ROOT, else the config file's
 * `root`, else $XDG_DATA_HOME/lake, else ~/.local/share/lake).
 */
export function resolveRoot(flag: unknown, env: NodeJS.ProcessEnv = process.env): string {
  if (typeof flag === "string" && flag) return flag;
  return defaultLocalRoot(env);
}

/** The one error of a --root that is not there (exit 7): commands that read a root never create it. */
export function noSuchRoot(root: string, cause?: unknown): CollectorError {
  return new CollectorError("Io", `${root}: no such storage root (ENOENT)`, cause === undefined ? {} : { cause });
}

/** Refuse a root that does not exist, or is not a directory (one line naming it, exit 7). */
export function requireRoot(root: string): void {
  let st;
  try {
    st = statSync(root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") throw noSuchRoot(root, e);
    throw e;
  }
  if (!st.isDirectory()) throw new CollectorError("Io", `${root}: not a directory (ENOTDIR)`);
}

/** This collector's fleet agent id: --agent, else $LAKE_AGENT, else the config file's `agent`, else the host name (sanitised). */
export function resolveAgent(flag: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const raw = typeof flag === "string" && flag ? flag : configuredAgent(env) || hostname();
  const id = raw.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "");
  if (!id) throw new CollectorError("Usage", `agent id "${raw}" has no usable characters`);
  return id;
}
