// `lake-collector hook` (the hook spool) and `lake-collector hooks install`, through the built bin.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decodeWalTail, encodeWalTail, isWalError, readWalFile, type WalDecodeResult } from "@lake/wal";
import { loadedModules, MODULES_IMPORT } from "@lake/tooling/modules";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, runCli } from "./helpers.js";

afterAll(cleanupTempDirs);

/** lake-reader's bin script in this repository (only its path is used here; the reader's statusline test runs it). */
const READER_BIN = fileURLToPath(new URL("../../reader/bin/lake-reader.js", import.meta.url));

const SID = "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b";

const SYNCS = fileURLToPath(new URL("./support/count-syncs.mjs", import.meta.url));

function event(n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { session_id: SID, transcript_path: `/home/dev/.claude/projects/p/${SID}.jsonl`, cwd: "/home/dev/p", hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: { command: `echo ${n}` }, n, ...extra };
}

function spool(root: string, sid = SID): string {
  return join(root, "_hooks", "spool", `${sid}.wal`);
}

/** The hook events of a spool file, in order, with their sequence numbers. */
function events(r: WalDecodeResult): { seq: number; event: Record<string, unknown>; received_at: unknown }[] {
  const out = [...r.records.map((e) => ({ seq: e.seq, raw: e.record as unknown as Record<string, unknown> })), ...r.skipped.map((e) => ({ seq: e.seq, raw: e.raw }))].sort((a, b) => a.seq - b.seq);
  return out.map((e) => {
    expect(e.raw.type).toBe("lake_hook_event");
    return { seq: e.seq, event: e.raw.payload as Record<string, unknown>, received_at: e.raw.received_at };
  });
}

describe("hook", { timeout: 120_000 }, () => {
  it("appends one event to <root>/_hooks/spool/<session_id>.wal, silently, as a @lake/wal record", async () => {
    const root = join(tempDir("hook"), "root");
    const r = await runCli(["hook", "--root", root], {}, JSON.stringify(event(1)));
    expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const d = await readWalFile(spool(root));
    expect(d.tornTail).toBeNull();
    const ev = events(d);
    expect(ev.map((e) => e.seq)).toEqual([1]);
    expect(ev[0]!.event).toEqual(event(1));
    expect(Date.parse(String(ev[0]!.received_at))).not.toBeNaN();
    // A session id that is not a plain file name goes to a hashed file name.
    const odd = await runCli(["hook", "--root", root], {}, JSON.stringify({ ...event(2), session_id: "../../etc/passwd" }));
    expect(odd.code, odd.stderr).toBe(0);
    expect(existsSync(join(root, "_hooks", "spool", "..", "..", "etc"))).toBe(false);
  });

  it("20 hooks at once: all 20 events land, seq 1..20 without a gap", async () => {
    const root = join(tempDir("hook20"), "root");
    const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => runCli(["hook", "--root", root], {}, JSON.stringify(event(i)))));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const d = await readWalFile(spool(root));
    expect(d.tornTail).toBeNull();
    const ev = events(d);
    expect(ev.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(ev.map((e) => e.event.n).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(existsSync(`${spool(root)}.lock`)).toBe(false);
  });

  it("the spool lock is the store's: a dead holder's lock is broken, a live holder is waited for", async () => {
    const root = join(tempDir("hooklock"), "root");
    expect((await runCli(["hook", "--root", root], {}, JSON.stringify(event(1)))).code).toBe(0);
    const file = spool(root);
    // A holder that takes the lock the store's way, then is killed while holding it.
    const hold = (ms: number) =>
      spawn(process.execPath, ["--input-type=module", "-e", `import { acquireLock } from "@lake/store/lock"; const l = await acquireLock(${JSON.stringify(join(root, "_hooks", "spool"))}, { name: ${JSON.stringify(`${SID}.wal.lock`)} }); process.stdout.write("held\\n"); setTimeout(() => { l.release(); process.exit(0); }, ${ms});`], { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] });
    const waitHeld = (p: ReturnType<typeof hold>) => new Promise<void>((res) => p.stdout!.once("data", () => res()));
    const dead = hold(60_000);
    await waitHeld(dead);
    expect(readFileSync(`${file}.lock`, "utf8")).toMatch(/^token [0-9a-f]{32}$/m); // @lake/durable's holder lines
    dead.kill("SIGKILL");
    await new Promise((r) => dead.once("exit", r));
    const a = await runCli(["hook", "--root", root], {}, JSON.stringify(event(2)));
    expect(a.code, a.stderr).toBe(0);
    expect(existsSync(`${file}.lock`)).toBe(false);
    // A live holder that lets go after 1.5 s: the hook waits for it, then appends.
    const live = hold(1500);
    await waitHeld(live);
    const t0 = Date.now();
    const b = await runCli(["hook", "--root", root], {}, JSON.stringify(event(3)));
    expect(b.code, b.stderr).toBe(0);
    expect(Date.now() - t0).toBeGreaterThan(1000);
    expect(events(await readWalFile(file)).map((e) => [e.seq, e.event.n])).toEqual([[1, 1], [2, 2], [3, 3]]);
  });

  it("a hook appends without decoding the spool: it goes on from the tail cache the last hook left (`<file>.tail`), which names the file as that hook left it", async () => {
    const root = join(tempDir("hooktail"), "root");
    for (let i = 1; i <= 3; i++) expect((await runCli(["hook", "--root", root], {}, JSON.stringify(event(i)))).code).toBe(0);
    const file = spool(root);
    const st = statSync(file, { bigint: true });
    const tail = decodeWalTail(readFileSync(`${file}.tail`, "utf8"))!;
    expect(tail).toMatchObject({ stat: `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`, lastSeq: 3 });
    // A cache that says seq 41 of this very file is believed: the next event is numbered 42, so the
    // hook read nothing of the file (a decode would have numbered it 4). Readers refuse the gap.
    writeFileSync(`${file}.tail`, encodeWalTail({ ...tail, lastSeq: 41 }));
    expect((await runCli(["hook", "--root", root], {}, JSON.stringify(event(4)))).code).toBe(0);
    try {
      await readWalFile(file);
      expect.unreachable();
    } catch (e) {
      expect(isWalError(e) && e.code).toBe("SequenceError");
      expect((e as Error).message).toMatch(/42/);
    }
    expect(decodeWalTail(readFileSync(`${file}.tail`, "utf8"))!.lastSeq).toBe(42);
  });

  it("a torn tail (an append cut mid-frame) loses no earlier event, and the next hook truncates it and appends", async () => {
    const root = join(tempDir("hooktorn"), "root");
    for (let i = 1; i <= 3; i++) expect((await runCli(["hook", "--root", root], {}, JSON.stringify(event(i)))).code).toBe(0);
    const file = spool(root);
    const good = statSync(file).size;
    expect((await runCli(["hook", "--root", root], {}, JSON.stringify(event(4, { pad: "x".repeat(5000) })))).code).toBe(0);
    const full = statSync(file).size;
    // Cut the fourth append in the middle of its frame.
    truncateSync(file, good + Math.floor((full - good) / 2));
    const torn = await readWalFile(file);
    expect(torn.tornTail).not.toBeNull();
    expect(torn.tornTail!.offset).toBe(good);
    expect(events(torn).map((e) => e.event.n)).toEqual([1, 2, 3]);

    expect((await runCli(["hook", "--root", root], {}, JSON.stringify(event(5)))).code).toBe(0);
    const after = await readWalFile(file);
    expect(after.tornTail).toBeNull();
    expect(events(after).map((e) => [e.seq, e.event.n])).toEqual([[1, 1], [2, 2], [3, 3], [4, 5]]);
  });

  it("a hook process SIGKILLed while it writes a large event loses no earlier event; the next hook appends fine", { timeout: 180_000 }, async () => {
    const root = join(tempDir("hookkill"), "root");
    expect((await runCli(["hook", "--root", root], {}, JSON.stringify(event(0)))).code).toBe(0);
    const file = spool(root);
    const big = JSON.stringify(event(-1, { tool_response: { stdout: "y".repeat(24 * 1024 * 1024) } }));
    let expected = [0];
    let caught = 0;
    let attempts = 0;
    for (; attempts < 12 && caught < 2; attempts++) {
      const before = statSync(file).size;
      const p = spawn(process.execPath, [BIN, "hook", "--root", root], { stdio: ["pipe", "ignore", "ignore"] });
      p.stdin.on("error", () => undefined);
      p.stdin.end(big);
      const exited = new Promise<NodeJS.Signals | null>((res) => p.on("exit", (_c, sig) => res(sig)));
      // Kill as soon as the file starts to grow: the write of the ~24 MB frame is under way.
      let done = false;
      void exited.then(() => (done = true));
      while (!done) {
        const size = statSync(file).size;
        if (size > before) {
          p.kill("SIGKILL");
          break;
        }
        await new Promise((r) => setImmediate(r));
      }
      const sig = await exited;
      const d = await readWalFile(file);
      // Whatever the kill hit, every event acknowledged before is there, in order.
      const ns = events(d).map((e) => e.event.n);
      expect(ns.slice(0, expected.length)).toEqual(expected);
      if (d.tornTail) {
        expect(sig).toBe("SIGKILL");
        expect(d.tornTail.offset).toBe(d.validLength);
        caught++;
      }
      expected = ns as number[];
      const n = 100 + attempts;
      const next = await runCli(["hook", "--root", root], {}, JSON.stringify(event(n)));
      expect(next.code, next.stderr).toBe(0);
      const d2 = await readWalFile(file);
      expect(d2.tornTail).toBeNull();
      const ev2 = events(d2);
      expect(ev2.map((e) => e.event.n)).toEqual([...expected, n]);
      expect(ev2.map((e) => e.seq)).toEqual(ev2.map((_, i) => i + 1));
      expected = ev2.map((e) => e.event.n as number);
    }
    console.log(`hook kill: ${caught} of ${attempts} kills left a torn tail`);
  });

  it("loads no record schema (zod), neither node:crypto nor node:fs/promises: only node built-ins, the collector's own modules, @lake/wal's frame code, the store lock and the defaults", async () => {
    const dir = tempDir("hook-imports");
    const root = join(dir, "root");
    for (const n of [1, 2]) {
      // The first event creates the spool file, the second appends to it (reading it first).
      const r = await runCli(["hook", "--root", root], { NODE_OPTIONS: `--import ${MODULES_IMPORT}`, XDG_CONFIG_HOME: join(dir, "no-config") }, JSON.stringify(event(n)));
      expect(r.code, r.stderr).toBe(0);
      const loaded = loadedModules(r.stderr).modules;
      expect(loaded.some((u) => u.endsWith("/packages/wal/dist/internal/writer.js"))).toBe(true);
      expect(loaded.filter((u) => /\/zod\/|\/internal\/records\.js$|\/wal\/dist\/index\.js$/.test(u))).toEqual([]);
      // Every lake module it loads is one the README names: the collector's, @lake/cli's (not its --store
      // option), @lake/wal/writer's, the lock's (and @lake/durable's under it and the floor), the defaults',
      // and the error factory every package's error class is made by (@lake/errors, node built-ins only).
      expect(loaded.filter((u) => u.endsWith("/packages/cli/dist/store.js"))).toEqual([]);
      // The frame digest of a small event is @lake/wal's own SHA-256 in JavaScript, and random bytes are
      // the kernel's: node:crypto (and the streams it loads) is not loaded, nor node:fs/promises (the
      // writer's I/O is synchronous), some 8 ms of a hook's start between them.
      const packages = new Set(loaded.filter((u) => u.startsWith("file:") && !u.includes("/apps/collector/")).map((u) => /\/packages\/([a-z]+)\/dist\//.exec(u)?.[1] ?? u));
      expect([...packages].sort()).toEqual(["cli", "durable", "errors", "layout", "store", "wal"]);
      expect(loaded.filter((u) => /^node:(crypto|fs\/promises|stream)$/.test(u))).toEqual([]);
    }
    expect(events(await readWalFile(spool(root))).map((e) => e.seq)).toEqual([1, 2]);
  });

  it("fsyncs what it must, once: a new spool file, its directory and the event; then the event alone", async () => {
    // count-syncs.mjs (a preload) records each fsync with the path its descriptor was opened with.
    const dir = tempDir("hook-syncs");
    const root = join(dir, "root");
    const syncs = async (n: number): Promise<string[]> => {
      const out = join(dir, `syncs-${n}.json`);
      const r = await runCli(["hook", "--root", root], { NODE_OPTIONS: `--import ${SYNCS}`, LAKE_TEST_SYNCS_OUT: out }, JSON.stringify(event(n)));
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(readFileSync(out, "utf8")) as { how: string; path: string }[]).filter((s) => s.how !== "open").map((s) => s.path);
    };
    const file = spool(root);
    // The first hook creates the spool file: its lineage frame, the directory entry, then the event.
    expect(await syncs(1)).toEqual([file, join(root, "_hooks", "spool"), file]);
    // The next appends from the tail cache: the event's one fsync, none again at close (each append was synced).
    expect(await syncs(2)).toEqual([file]);
    expect(await syncs(3)).toEqual([file]);
    expect(events(await readWalFile(file)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it("stdin from a non-blocking pipe whose writer pauses mid-event: what was read before it would block is kept, the rest read as it comes", async () => {
    const dir = tempDir("hook-stdin");
    const root = join(dir, "root");
    // Node makes a pipe non-blocking when it makes `process.stdin` of it (O_NONBLOCK is on the open
    // pipe, so a parent that did so hands it on): preloaded here, before the hook reads fd 0.
    const pre = join(dir, "stdin-stream.cjs");
    writeFileSync(pre, "process.stdin;\n");
    const text = JSON.stringify(event(7, { big: "x".repeat(200_000) }));
    const child = spawn(process.execPath, ["-r", pre, BIN, "hook", "--root", root], { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.stdin.write(text.slice(0, 1000));
    await new Promise((resolve) => setTimeout(resolve, 400));
    child.stdin.end(text.slice(1000));
    expect(await exited, stderr).toBe(0);
    expect(events(await readWalFile(spool(root))).map((e) => e.event)).toEqual([event(7, { big: "x".repeat(200_000) })]);
  });

  it("stdin that is not a JSON object: exit 6, one line naming stdin, nothing written", async () => {
    const root = join(tempDir("hookbad"), "root");
    for (const input of ["not json at all", "[1,2,3]", ""]) {
      const r = await runCli(["hook", "--root", root], {}, input);
      expect(r.code).toBe(6);
      expect(r.stderr).toMatch(/^lake-collector hook: stdin: hook event is not (valid JSON|a JSON object)/);
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stdout).toBe("");
      expect(existsSync(join(root, "_hooks"))).toBe(false);
    }
    // An existing spool is not touched either.
    expect((await runCli(["hook", "--root", root], {}, JSON.stringify(event(1)))).code).toBe(0);
    const bytes = readFileSync(spool(root));
    expect((await runCli(["hook", "--root", root], {}, "{\"session_id\": \"" + SID + "\", oops")).code).toBe(6);
    expect(readFileSync(spool(root))).toEqual(bytes);
  });
});

describe("hooks install", { timeout: 60_000 }, () => {
  const settings = {
    model: "opus",
    permissions: { allow: ["Bash(ls:*)"], deny: [] },
    env: { FOO: "bar" },
    hooks: {
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "~/bin/guard.sh", timeout: 5 }] }],
      Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }],
      CustomEvent: [{ hooks: [{ type: "command", command: "custom" }] }],
    },
  };
  const EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop", "SubagentStop", "PreCompact", "SessionEnd"];

  it("adds lake's hook to every event, shows the change, keeps the user's hooks and settings, and is idempotent", async () => {
    const file = join(tempDir("hooks"), "settings.json");
    writeFileSync(file, JSON.stringify(settings, null, 2) + "\n");
    const r = await runCli(["hooks", "install", "--settings", file, "--command", "lake-collector hook"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(file);
    expect(r.stdout).toMatch(/^\+ .*"command": "lake-collector hook"/m);
    expect(r.stdout).toMatch(/written/);
    const after = JSON.parse(readFileSync(file, "utf8")) as typeof settings & { hooks: Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]> };
    expect(after.model).toBe("opus");
    expect(after.permissions).toEqual(settings.permissions);
    expect(after.env).toEqual(settings.env);
    expect(after.hooks.CustomEvent).toEqual(settings.hooks.CustomEvent);
    expect(after.hooks.PreToolUse![0]).toEqual(settings.hooks.PreToolUse[0]);
    expect(after.hooks.Stop![0]).toEqual(settings.hooks.Stop[0]);
    for (const e of EVENTS) {
      const mine = after.hooks[e]!.filter((g) => g.hooks.some((h) => h.type === "command" && h.command === "lake-collector hook"));
      expect(mine, e).toHaveLength(1);
      if (e === "PreToolUse" || e === "PostToolUse") expect(mine[0]!.matcher).toBe("*");
    }
    const bytes = readFileSync(file);
    const again = await runCli(["hooks", "install", "--settings", file, "--command", "lake-collector hook", "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ file, added: [], written: false });
    expect(readFileSync(file)).toEqual(bytes);
  });

  it("writes node and the bin by absolute path; that exact command, run by sh with PATH=/usr/bin:/bin, lands the event", async () => {
    const dir = tempDir("hooksabs");
    const file = join(dir, "settings.json");
    // An older install's bare command is pointed at the absolute one, not kept beside it.
    writeFileSync(file, JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "lake-collector hook" }] }] } }));
    const r = await runCli(["hooks", "install", "--settings", file, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ added: EVENTS, written: true });
    const hooks = (JSON.parse(readFileSync(file, "utf8")) as { hooks: Record<string, { hooks: { command: string }[] }[]> }).hooks;
    const commands = new Set(EVENTS.flatMap((e) => hooks[e]!.flatMap((g) => g.hooks.map((h) => h.command))));
    expect(commands.size).toBe(1);
    const [command] = [...commands] as [string];
    expect(command).toBe(`${realpathSync(process.execPath)} ${realpathSync(BIN)} hook`);
    const root = join(dir, "root");
    const sh = spawnSync("env", ["-i", "PATH=/usr/bin:/bin", `LAKE_ROOT=${root}`, "sh", "-c", command], { input: JSON.stringify(event(7)), encoding: "utf8" });
    expect(sh.status, sh.stderr).toBe(0);
    expect(events(await readWalFile(spool(root))).map((e) => e.event)).toEqual([event(7)]);
  });

  it("--statusline sets statusLine to lake-reader on PATH by absolute real path (run by this node), idempotently; keeps the rest", async () => {
    const dir = tempDir("hooksline");
    const file = join(dir, "settings.json");
    writeFileSync(file, JSON.stringify(settings, null, 2) + "\n");
    // lake-reader on PATH as npm links it: a symlink to the package's bin script.
    const bin = join(dir, "bin");
    mkdirSync(bin);
    symlinkSync(READER_BIN, join(bin, "lake-reader"));
    const env = { PATH: `${bin}:/usr/bin:/bin` };
    const r = await runCli(["hooks", "install", "--statusline", "--settings", file, "--command", "lake-collector hook", "--json"], env);
    expect(r.code, r.stderr).toBe(0);
    const want = `${realpathSync(process.execPath)} ${realpathSync(READER_BIN)} statusline`;
    expect(JSON.parse(r.stdout)).toEqual({ file, added: EVENTS, statusline: "set", statusline_command: want, written: true });
    const after = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(after.statusLine).toEqual({ type: "command", command: want });
    expect(after.model).toBe("opus");
    expect(after.permissions).toEqual(settings.permissions);
    const bytes = readFileSync(file);
    const again = await runCli(["hooks", "install", "--statusline", "--settings", file, "--command", "lake-collector hook", "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ added: [], statusline: "unchanged", written: false });
    expect(readFileSync(file)).toEqual(bytes);
    // Without --statusline the status line is left alone.
    const plain = await runCli(["hooks", "install", "--settings", file, "--command", "lake-collector hook", "--json"], env);
    expect(JSON.parse(plain.stdout)).toEqual({ file, added: [], written: false });
  });

  it("--statusline: lake's older status line is repointed, another program's is refused (exit 6, nothing written) unless --force", async () => {
    const dir = tempDir("hookslineother");
    const file = join(dir, "settings.json");
    const cmd = "/opt/lake/bin/lake-reader statusline";
    writeFileSync(file, JSON.stringify({ statusLine: { type: "command", command: "lake-reader statusline", padding: 0 } }));
    const r = await runCli(["hooks", "install", "--statusline", "--statusline-command", cmd, "--settings", file, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ statusline: "updated", written: true });
    expect(JSON.parse(readFileSync(file, "utf8")).statusLine).toEqual({ type: "command", command: cmd, padding: 0 });
    const other = JSON.stringify({ statusLine: { type: "command", command: "bunx ccusage statusline" } });
    writeFileSync(file, other);
    const refused = await runCli(["hooks", "install", "--statusline", "--statusline-command", cmd, "--settings", file]);
    expect(refused.code).toBe(6);
    expect(refused.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(refused.stderr).toContain(`${file}: statusLine already runs "bunx ccusage statusline", not lake-reader; nothing written (--force replaces it)`);
    expect(readFileSync(file, "utf8")).toBe(other);
    const forced = await runCli(["hooks", "install", "--statusline", "--statusline-command", cmd, "--force", "--settings", file, "--json"]);
    expect(JSON.parse(forced.stdout)).toMatchObject({ statusline: "updated", written: true });
    expect(JSON.parse(readFileSync(file, "utf8")).statusLine).toEqual({ type: "command", command: cmd });
  });

  it("--statusline without lake-reader on PATH: exit 2, one line, nothing written; --force alone is a usage error", async () => {
    const file = join(tempDir("hookslinenone"), "settings.json");
    const r = await runCli(["hooks", "install", "--statusline", "--settings", file], { PATH: "/usr/bin:/bin" });
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("lake-reader is not on PATH");
    expect(existsSync(file)).toBe(false);
    const f = await runCli(["hooks", "install", "--force", "--settings", file]);
    expect(f.code).toBe(2);
    expect(existsSync(file)).toBe(false);
  });

  it("--dry-run shows the change and writes nothing; a missing file is created", async () => {
    const dir = tempDir("hooksdry");
    const file = join(dir, "settings.json");
    writeFileSync(file, JSON.stringify(settings));
    const bytes = readFileSync(file);
    const mtime = statSync(file).mtimeMs;
    const r = await runCli(["hooks", "install", "--settings", file, "--dry-run"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/dry run: not written/);
    expect(r.stdout).toMatch(/^\+ /m);
    expect(readFileSync(file)).toEqual(bytes);
    expect(statSync(file).mtimeMs).toBe(mtime);
    const fresh = join(dir, "new", "settings.json");
    const c = await runCli(["hooks", "install", "--settings", fresh, "--json"]);
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout)).toMatchObject({ added: EVENTS, written: true });
    expect(Object.keys(JSON.parse(readFileSync(fresh, "utf8")).hooks).sort()).toEqual([...EVENTS].sort());
  });

  it("a settings file that is not JSON: exit 6, one line naming the file, the file untouched", async () => {
    const dir = tempDir("hooksbad");
    for (const text of ["{ \"model\": \"opus\", ", "[1, 2]", "{\"hooks\": []}"]) {
      const file = join(dir, "settings.json");
      writeFileSync(file, text);
      const r = await runCli(["hooks", "install", "--settings", file]);
      expect(r.code, text).toBe(6);
      expect(r.stderr).toMatch(new RegExp(`^lake-collector hooks install: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: `));
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(readFileSync(file, "utf8")).toBe(text);
    }
  });
});
