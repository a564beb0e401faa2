// Shared test helpers: a tiny converter standing in for an adapter, and source builders.
import { canonicalize, type CanonicalRecord } from "@lake/events";
import type { Convert, SourceRef } from "../src/index.js";

/** A converter standing in for an adapter: one record per JSON line; uuid → record_id, type → kind. */
export const convert: Convert = (lines, ctx) =>
  lines.map((l) => {
    const v = (typeof l.value === "object" && l.value !== null ? l.value : {}) as Record<string, unknown>;
    const rec: Record<string, unknown> = {
      runtime: ctx.source.runtime,
      session_id: ctx.sessionId,
      stream: ctx.source.stream,
      kind: v.type === "assistant" ? "assistant" : v.type === "user" ? "user" : "meta",
      text: typeof v.text === "string" ? v.text : undefined,
      source_path: ctx.source.source,
      source_offset: l.offset,
      source_line: l.line,
      adapter: ctx.source.adapter,
      adapter_version: ctx.source.adapterVersion,
    };
    if (typeof v.uuid === "string") rec.record_id = v.uuid;
    if (typeof v.parent === "string") rec.parent_id = v.parent;
    if (typeof v.call === "string") rec.tool_call_id = v.call;
    if (rec.text === undefined) delete rec.text;
    return canonicalize(rec as unknown as Parameters<typeof canonicalize>[0]) as CanonicalRecord;
  });

/** A source ref for a file. */
export function src(path: string, opts: Partial<SourceRef> = {}): SourceRef {
  return {
    path,
    source: opts.source ?? path.split("/").slice(-2).join("/"),
    stream: opts.stream ?? "main",
    kind: opts.kind ?? "transcript",
    runtime: "test",
    adapter: "test-adapter",
    adapterVersion: "1",
    ...opts,
  };
}

/** One JSON line (with newline) of a given approximate size. */
export function jline(uuid: string, text = "hello", extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: "user", uuid, text, ...extra }) + "\n";
}

/** Collect lines of text to silence the logger while keeping what it said. */
export function capture(): { lines: string[]; logger: (l: string) => void } {
  const lines: string[] = [];
  return { lines, logger: (l) => lines.push(l) };
}
