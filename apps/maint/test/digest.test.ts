// digest.json on real Claude Code sessions: every value is derived here again, independently, from
// the raw JSONL (not from the converted records).
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { digestKey, type SessionPartition } from "@lake/layout";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { BACKENDS, fixturePath, fixtureRecords, freshStore, initStore, pushSession, row, run, split } from "./helpers.js";

afterAll(cleanupTempDirs);

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Expected digest values straight from the transcript lines. */
function expected(file: string) {
  const lines = readFileSync(fixturePath(file), "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Obj);
  const files = new Map<string, { reads: number; edits: number; writes: number }>();
  const calls: { id: string; command: string; ts: string }[] = [];
  const results = new Map<string, { isError: boolean; text: string; exit?: number }>();
  const usageByRequest = new Map<string, Obj>();
  const seenCall = new Set<string>();
  for (const d of lines) {
    const content = d.message?.content;
    if (!Array.isArray(content)) continue;
    for (const b of content) {
      if (b.type === "tool_use" && d.type === "assistant" && !seenCall.has(b.id)) {
        seenCall.add(b.id);
        const p = b.input?.file_path;
        if (typeof p === "string") {
          const f = files.get(p) ?? { reads: 0, edits: 0, writes: 0 };
          if (b.name === "Read") f.reads++;
          if (b.name === "Edit" || b.name === "MultiEdit") f.edits++;
          if (b.name === "Write") f.writes++;
          if (["Read", "Edit", "MultiEdit", "Write"].includes(b.name)) files.set(p, f);
        }
        if (b.name === "Bash") calls.push({ id: b.id, command: b.input.command, ts: d.timestamp });
      }
      if (b.type === "tool_result" && !results.has(b.tool_use_id)) {
        const text = typeof b.content === "string" ? b.content : Array.isArray(b.content) ? b.content.filter((x: Obj) => typeof x.text === "string").map((x: Obj) => x.text).join("\n") : "";
        const exit = typeof d.toolUseResult?.exitCode === "number" ? d.toolUseResult.exitCode : undefined;
        results.set(b.tool_use_id, exit === undefined ? { isError: b.is_error === true, text } : { isError: b.is_error === true, text, exit });
      }
    }
    if (d.type === "assistant" && d.message?.usage) {
      const key = d.requestId ?? d.message.id;
      const cur = usageByRequest.get(key);
      if (!cur || d.message.usage.output_tokens > cur.output_tokens) usageByRequest.set(key, d.message.usage);
    }
  }
  const commands = calls.map((c) => {
    const r = results.get(c.id);
    const fromText = r?.isError ? /^Exit code (\d+)/.exec(r.text) : null;
    const exit = r?.exit ?? (fromText ? Number(fromText[1]) : null);
    const status = r === undefined ? "no_result" : r.isError || (exit !== null && exit !== 0) ? "failed" : "ok";
    // The README's rule: command text longer than 1000 characters is cut there and ends in "…".
    return { command: c.command.length > 1000 ? c.command.slice(0, 1000) + "…" : c.command, status, exit_code: exit };
  });
  const sum = (f: (u: Obj) => number | undefined) => [...usageByRequest.values()].reduce((n, u) => n + (f(u) ?? 0), 0);
  const usage = {
    input_tokens: sum((u) => u.input_tokens),
    cached_input_tokens: sum((u) => u.cache_read_input_tokens),
    cache_write_tokens: sum((u) => u.cache_creation_input_tokens),
    output_tokens: sum((u) => u.output_tokens),
  };
  // Friction, by the README's rules.
  const head = (cmd: string) => {
    const w = cmd.trim().split(/\s+/);
    while (w.length > 1 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!)) w.shift();
    return w[1] !== undefined && /^[A-Za-z][A-Za-z0-9:_.-]*$/.test(w[1]) ? `${w[0]} ${w[1]}` : w[0]!;
  };
  const failures = new Map<string, number>();
  for (const c of calls.map((x, i) => ({ command: x.command, status: commands[i]!.status }))) if (c.status === "failed") failures.set(head(c.command), (failures.get(head(c.command)) ?? 0) + 1);
  const repeated = [...failures.entries()].filter(([, n]) => n >= 3).map(([h]) => h).sort();
  const churn = [...files.entries()].filter(([, f]) => f.edits + f.writes >= 5).map(([p]) => p).sort();
  const resultList = [...results.values()];
  let run = 0;
  for (let i = resultList.length - 1; i >= 0 && (resultList[i]!.isError || (resultList[i]!.exit ?? 0) !== 0); i--) run++;
  return { files, commands, usage, responses: usageByRequest.size, repeated, churn, abandoned: run >= 3 ? run : 0, lines };
}

async function digestOf(url: string, part: SessionPartition, file: string, segments: number) {
  const store = await initStore(url);
  const recs = await fixtureRecords(file, part.session);
  await pushSession(store, part, split(recs.map((r) => row(r, part.agent)), segments));
  const r = await run(["digest", "--store", url, "--json"]);
  expect(r.code, r.err.join("\n")).toBe(0);
  expect(JSON.parse(r.out[0]!).partitions[0].written).toEqual([digestKey(part)]);
  const got = (await store.get(digestKey(part)))!;
  store.close();
  return { bytes: Buffer.from(got.body).toString("utf8"), rows: recs.length };
}

function check(d: Obj, e: ReturnType<typeof expected>) {
  expect(d.files).toEqual([...e.files.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([path, f]) => ({ path, ...f })));
  expect(d.commands.map((c: Obj) => ({ command: c.command, status: c.status, exit_code: c.exit_code }))).toEqual(e.commands);
  expect({ input_tokens: d.usage.input_tokens, cached_input_tokens: d.usage.cached_input_tokens, cache_write_tokens: d.usage.cache_write_tokens, output_tokens: d.usage.output_tokens }).toEqual(e.usage);
  expect(d.usage.total_tokens).toBe(e.usage.input_tokens + e.usage.cached_input_tokens + e.usage.cache_write_tokens + e.usage.output_tokens);
  expect(d.usage.responses).toBe(e.responses);
  expect(d.friction.filter((f: Obj) => f.kind === "repeated_failure").map((f: Obj) => f.command_head)).toEqual(e.repeated);
  expect(d.friction.filter((f: Obj) => f.kind === "file_churn").map((f: Obj) => f.path)).toEqual(e.churn);
  expect(d.friction.find((f: Obj) => f.kind === "abandoned_after_failures")?.failures ?? 0).toBe(e.abandoned);
  const ts = e.lines.map((l) => l.timestamp ?? l.snapshot?.timestamp).filter((t): t is string => typeof t === "string").sort();
  expect(d.first_ts).toBe(ts[0]);
  expect(d.last_ts).toBe(ts[ts.length - 1]);
}

describe.each(BACKENDS)("digest (%s)", (backend) => {
  it("tool_heavy.jsonl: files, commands, usage from the session's own sealed segments; written once", async () => {
    const part = { dt: "2026-02-10", fleet: "f1", runtime: "claude-code", agent: "host-a", session: "d6e0bada-1959-4eec-a9d2-0bfade768d8f" };
    const url = await freshStore(backend, "digest");
    const { bytes, rows } = await digestOf(url, part, "tool_heavy.jsonl", 3);
    const d = JSON.parse(bytes);
    const e = expected("tool_heavy.jsonl");
    check(d, e);
    expect(d.rows).toBe(rows);
    expect(d.segments).toBe(3);
    // Known facts of this transcript, as a guard on the derivation itself.
    expect(d.commands.map((c: Obj) => c.command)).toEqual(["mix phx.server", expect.stringMatching(/^tail -5 /)]);
    expect(d.files.map((f: Obj) => f.path)).toEqual(["/home/marco/projects/spotter/assets/js/app.js"]);
    expect(d.usage.output_tokens).toBeGreaterThan(0);
    // Sorted keys, newline-terminated, and a second run writes nothing.
    expect(bytes.endsWith("}\n")).toBe(true);
    expect(Object.keys(d)).toEqual([...Object.keys(d)].sort());
    const again = await run(["digest", "--store", url, "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out[0]!).partitions).toEqual([]);
  });
});

it("long_session.jsonl: exit codes, repeated failures, file churn; the same segments give the same bytes", async () => {
  const part = { dt: "2026-02-11", fleet: "f1", runtime: "claude-code", agent: "host-b", session: "258c7280-ae70-4798-800f-63464d01a85d" };
  const a = await digestOf(await freshStore("local", "digest-long"), part, "long_session.jsonl", 4);
  const d = JSON.parse(a.bytes);
  const e = expected("long_session.jsonl");
  check(d, e);
  // Guards on the derivation: this session has failing commands with exit codes and a file edited 8 times.
  expect(d.commands.filter((c: Obj) => c.status === "failed").map((c: Obj) => c.exit_code)).toEqual(expect.arrayContaining([128, 1, 2]));
  expect(d.friction.find((f: Obj) => f.kind === "file_churn" && f.path.endsWith("/project_review_live.ex"))?.modifications).toBe(8);
  expect(d.friction.find((f: Obj) => f.kind === "repeated_failure")).toMatchObject({ command_head: "mix test", failures: 4, exit_codes: [1, 2, 2, 2] });
  // Determinism: the same segments pushed to another store give the same bytes.
  const b = await digestOf(await freshStore("local", "digest-long2"), part, "long_session.jsonl", 4);
  expect(b.bytes).toBe(a.bytes);
}, 60_000);
