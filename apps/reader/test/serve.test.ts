/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// `lake-reader serve` in a real browser: Debian's Chromium driven by playwright-core (no browser
// download), one browser for the whole file, against a fleet built by the real lake-collector and
// lake-maint from the fixtures, served by the built lake-reader bin. Every page loads without a
// console error and shows what the CLI's --json says. With LAKE_UPDATE_SCREENSHOTS=1 the pages'
// screenshots in docs/ are rewritten.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumPath } from "@lake/tooling/chromium";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { buildServedFleet, FIXTURE_SESSION, READER, SECRET_SESSION, startServe, testSecrets, UNPRICED_SESSION, type Served, type ServedFleet } from "./support/served.js";

const SHOTS = fileURLToPath(new URL("../docs/", import.meta.url));
const UPDATE_SHOTS = process.env.LAKE_UPDATE_SCREENSHOTS === "1";
/** The zone the server and the CLI run in ($TZ): its days differ from UTC's on the fixtures (checked). */
const ZONE = "Asia/Tokyo";

type Row = Record<string, unknown>;
type Tool = { name: string | null; call_id: string | null; input: string | null; result: { text: string | null; is_error: boolean | null } | null; child?: { stream: string; items: Item[] } };
type Item = { kind: string; ts: string | null; stream: string; turn: number; text?: string; thinking?: true; tool?: Tool };
type Conv = { session_id: string; source: string; first_ts: string | null; last_ts: string | null; items: Item[]; other_streams: { stream: string; items: Item[] }[] };

let fleet: ServedFleet;
let served: Served;
let context: BrowserContext;

/** Run the built lake-reader bin and parse its JSON. */
function cli<T>(args: readonly string[]): T {
  return JSON.parse(execFileSync(process.execPath, [READER, ...args, ...fleet.args], { encoding: "utf8", env: { PATH: process.env.PATH, TZ: ZONE, ...fleet.env }, maxBuffer: 64 << 20 })) as T;
}

const fmtInt = (n: unknown) => (n === null ? "–" : Math.round(Number(n)).toLocaleString("en-US"));
/** A cost as `usage` prints it: "$X", "$X + unpriced" when some tokens have no price, "unpriced" when none has. */
const fmtCost = (n: Row) => (n.cost_usd === null ? "unpriced" : `$${Number(n.cost_usd).toFixed(2)}${Number(n.unpriced_tokens) > 0 ? " + unpriced" : ""}`);
/** "yyyy-mm-dd HH:MM" of an ISO time in ZONE. */
function zoned(iso: string): string {
  const p: Record<string, string> = {};
  for (const x of new Intl.DateTimeFormat("en-US", { timeZone: ZONE, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }).formatToParts(Date.parse(iso))) p[x.type] = x.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
}
const squash = (s: string) => s.replace(/\s+/g, " ").trim();

/** expect.poll with room for a loaded machine (the default second is too short for a page's API calls there). */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 30_000, interval: 100 });

/** Open a page of the server; collects console errors and page errors. */
async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(new URL(path, served.url).href, { waitUntil: "load" });
  return { page, errors };
}

async function shot(page: Page, name: string): Promise<void> {
  if (!UPDATE_SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.waitForLoadState("networkidle");
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}

/** Every tool call of a conversation, children included. */
function toolCalls(items: readonly Item[], out: Tool[] = []): Tool[] {
  for (const it of items) {
    if (!it.tool) continue;
    out.push(it.tool);
    if (it.tool.child) toolCalls(it.tool.child.items, out);
  }
  return out;
}

/** One HTTP request on its own connection (the CLI runs in between block this process). */
function httpGet(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The status of a request with the given headers and method. */
const getStatus = async (url: string, headers: Record<string, string> = {}, method = "GET") => (await httpGet(url, headers, method)).status;

beforeAll(async () => {
  // $LAKE_TEST_CHROMIUM, else chromium on PATH, installed from Debian's packages when missing (as root).
  const executablePath = chromiumPath();
  fleet = await buildServedFleet(tempDir("reader-serve"));
  served = await startServe(fleet.args, { ...fleet.env, TZ: ZONE });
  context = await chromium.launchPersistentContext(tempDir("reader-chromium"), {
    executablePath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1360, height: 900 },
    deviceScaleFactor: 1,
  });
}, 300_000);

afterAll(async () => {
  await context?.close();
  await served?.stop();
  cleanupTempDirs();
});

describe("lake-reader serve in Chromium", () => {
  it("overview: the daily numbers and totals are usage daily --json's (\"+ unpriced\" like usage), in the server's zone, another zone on request; a chart per day; no console error", async () => {
    const daily = cli<{ daily: Row[]; totals: Row; timezone: string }>(["usage", "daily", "--json"]);
    expect(daily.daily.length).toBeGreaterThan(3);
    expect(daily.timezone).toBe(ZONE);
    const { page, errors } = await open("/");
    const table = page.getByTestId("daily");
    await table.locator("tfoot tr").waitFor();
    const shown = () => table.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")));
    const rowsOf = (d: { daily: Row[] }) => [...d.daily].reverse().map((r) => [r.date, r.input_tokens, r.cached_input_tokens, r.cache_write_tokens, r.output_tokens, r.total_tokens].map((v, i) => (i === 0 ? String(v) : fmtInt(v))).concat(fmtCost(r)));
    const rows = await shown();
    expect(rows).toEqual(rowsOf(daily));
    // The day of the unpriced session has priced usage too: "$X + unpriced", as the usage table says.
    expect(daily.daily.filter((d) => Number(d.unpriced_tokens) > 0 && d.cost_usd !== null).length).toBeGreaterThan(0);
    expect(rows.filter((r) => r[6]!.endsWith(" + unpriced")).length).toBeGreaterThan(0);
    const foot = await table.locator("tfoot td").allTextContents();
    const t = daily.totals;
    expect(foot).toEqual(["Total", ...[t.input_tokens, t.cached_input_tokens, t.cache_write_tokens, t.output_tokens, t.total_tokens].map(fmtInt), fmtCost(t)]);
    expect(foot[6]).toMatch(/^\$\d+\.\d\d \+ unpriced$/);
    expect(await page.getByTestId("card-total").locator(".card-value").textContent()).toBe(fmtCost(t));
    // The zone the days are counted in is named, and is the header control's choice.
    expect(await page.getByTestId("days-zone").textContent()).toContain(ZONE);
    expect(await page.locator("select[name=tz]").inputValue()).toBe(ZONE);
    // The stacked chart: one canvas, a legend entry per model of the period.
    await page.locator(".chart canvas").waitFor();
    const models = new Set(cli<{ daily: { model: string | null }[] }>(["usage", "daily", "--json", "--by", "model"]).daily.map((d) => d.model ?? "unknown"));
    expect(await page.locator(".legend-item").count()).toBe(models.size);
    await page.locator(".toggle button", { hasText: "Runtime" }).click();
    await page.waitForURL(/by=runtime/);
    await poll(() => page.locator(".legend-item").count()).toBe(3);
    await page.locator(".toggle button", { hasText: "Model" }).click();
    await page.waitForURL((u) => !u.search.includes("by="));
    await poll(() => page.locator(".legend-item").count()).toBe(models.size);
    await shot(page, "overview");
    // Another zone: the days are usage daily --timezone UTC --json's (not the same days as ZONE's).
    const utc = cli<{ daily: Row[]; timezone: string }>(["usage", "daily", "--json", "--timezone", "UTC"]);
    expect(utc.daily.map((d) => d.date)).not.toEqual(daily.daily.map((d) => d.date));
    await page.locator("select[name=tz]").selectOption("UTC");
    await page.waitForURL(/tz=UTC/);
    await poll(() => page.getByTestId("days-zone").textContent()).toContain("UTC");
    await poll(shown).toEqual(rowsOf(utc));
    // The zone goes along to the next page.
    await page.locator("nav a", { hasText: "Sessions" }).click();
    await page.waitForURL(/\/sessions\?tz=UTC/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("sessions: every session of sessions --json, filtered and sorted through the URL", async () => {
    const all = cli<Row[]>(["sessions", "--json"]);
    const usage = cli<{ sessions: Row[] }>(["usage", "session", "--json"]).sessions;
    const costs = new Map(usage.map((s) => [s.session_id, s.cost_usd as number | null]));
    const { page, errors } = await open("/sessions");
    const ids = () => page.locator("[data-testid=sessions] tbody tr").evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.session ?? ""));
    await poll(async () => (await ids()).length).toBe(all.length);
    expect((await ids()).sort()).toEqual(all.map((s) => String(s.session_id)).sort());
    await shot(page, "sessions");
    await page.locator("select[name=runtime]").selectOption("codex");
    await page.waitForURL(/runtime=codex/);
    const codex = all.filter((s) => s.runtime === "codex").map((s) => String(s.session_id));
    expect(codex.length).toBeGreaterThan(0);
    await poll(async () => (await ids()).sort()).toEqual(codex.sort());
    // The costs answer late (as on a slow fleet): the rows wait for them, never shown in another order first.
    await page.route("**/api/usage/session**", async (route) => {
      await new Promise((r) => setTimeout(r, 700));
      await route.continue();
    });
    await page.goto(new URL("/sessions?sort=cost", served.url).href);
    await poll(async () => (await ids()).length).toBe(all.length);
    const byCost = await ids();
    const shown = byCost.map((id) => costs.get(id) ?? -1);
    expect(shown).toEqual([...shown].sort((a, b) => (b ?? -1) - (a ?? -1)));
    await page.unroute("**/api/usage/session**");
    await page.goto(new URL(`/sessions?q=${FIXTURE_SESSION.slice(0, 8)}`, served.url).href);
    await poll(ids).toEqual([FIXTURE_SESSION]);
    // The session of a model with no price: its cost is "unpriced", as usage session says.
    expect(fmtCost(usage.find((s) => s.session_id === UNPRICED_SESSION)!)).toBe("unpriced");
    await page.goto(new URL(`/sessions?q=${UNPRICED_SESSION.slice(0, 8)}`, served.url).href);
    await poll(ids).toEqual([UNPRICED_SESSION]);
    expect(await page.locator("[data-testid=sessions] tbody tr td.num").last().textContent()).toBe("unpriced");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("session: every tool call of the fixture session beside its result, the child agent nested, usage per turn", async () => {
    const conv = cli<Conv>(["show", FIXTURE_SESSION, "--json"]);
    const calls = toolCalls(conv.items);
    expect(calls.length).toBeGreaterThan(100);
    expect(calls.some((c) => c.child)).toBe(true);
    const { page, errors } = await open(`/session/${FIXTURE_SESSION}`);
    await page.locator("[data-testid=tool-call]").first().waitFor();
    const onPage = await page.locator("[data-testid=tool-call]").evaluateAll((els) =>
      els.map((e) => {
        const result = e.querySelector(":scope > .tool-pair > .result");
        return { id: (e as HTMLElement).dataset.callId ?? "", name: e.querySelector(":scope > .tool-pair > .call .tool-name")?.textContent ?? "", result: result?.textContent ?? "" };
      }),
    );
    expect(onPage.length).toBe(calls.length);
    const byId = new Map(onPage.map((c) => [c.id, c]));
    for (const c of calls) {
      const got = byId.get(c.call_id ?? "");
      expect(got, `call ${c.call_id}`).toBeDefined();
      expect(got!.name).toContain(c.name ?? "tool");
      if (c.result === null) expect(got!.result).toContain("no result");
      else expect(squash(got!.result)).toContain(squash(c.result.text ?? "").slice(0, 60).trim());
    }
    // The child agent: nested under its call, collapsed until opened.
    const child = page.locator("details.child").first();
    expect(await child.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    await child.locator(":scope > summary").click();
    expect(await child.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    // Thinking is collapsed.
    const thinking = conv.items.filter((i) => i.thinking).length;
    expect(thinking).toBeGreaterThan(0);
    expect(await page.locator(".item.thinking > details:not([open])").count()).toBeGreaterThanOrEqual(thinking);
    // Usage per turn adds up to the session's usage (usage session --json).
    const want = cli<{ sessions: Row[] }>(["usage", "session", "--json"]).sessions.find((s) => s.session_id === FIXTURE_SESSION)!;
    await poll(() => page.getByTestId("session-usage").textContent()).toMatch(/responses/);
    const turns = await page.getByTestId("turn-usage").allTextContents();
    expect(turns.length).toBe(new Set(conv.items.map((i) => i.turn)).size);
    const perTurn = await page.evaluate(async (sid) => {
      const r = (await (await fetch(`/api/responses/${sid}`)).json()) as { responses: { total_tokens: number | null }[] };
      return r.responses.reduce((a, x) => a + (x.total_tokens ?? 0), 0);
    }, FIXTURE_SESSION);
    expect(perTurn).toBe(want.total_tokens);
    // Times in the server's zone, named.
    expect(squash((await page.locator(".meta").textContent()) ?? "")).toContain(`${zoned(conv.first_ts!)} → ${zoned(conv.last_ts!)} ${ZONE}`);
    expect(await page.locator(".turn-time").first().textContent()).toBe(zoned(conv.items[0]!.ts!));
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, "session");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("session: masked text shows as masks, a quarantined record is marked, no secret reaches the page", async () => {
    const { awsKeyId, pem } = testSecrets();
    const { page, errors } = await open(`/session/${SECRET_SESSION}`);
    await page.locator(".item.user").first().waitFor();
    expect(await page.locator(".item.user .mask").first().textContent()).toBe("masked · aws-access-key-id");
    expect(await page.locator(".item.user .mask-rules").first().textContent()).toContain("aws-access-key-id");
    const q = page.locator(".item.quarantined");
    expect(await q.count()).toBe(1);
    expect(await q.textContent()).toContain("private-key");
    const html = await page.content();
    expect(html).not.toContain(awsKeyId);
    expect(html).not.toContain(pem.split("\n")[1]!);
    await shot(page, "session-masks");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("search: a known word is found, and its link opens the transcript at that turn", async () => {
    const hits = cli<{ events: { session_id: string; stream: string; ts: string; kind: string }[]; claims: Row[] }>(["search", "marot", "--limit", "50", "--json"]);
    const hit = hits.events.find((e) => e.session_id === FIXTURE_SESSION)!;
    expect(hit).toBeDefined();
    const conv = cli<Conv>(["show", FIXTURE_SESSION, "--json"]);
    // The turn of the hit: the last record of its stream at or before its time.
    const flat: Item[] = [];
    const walk = (items: readonly Item[]) => items.forEach((i) => (flat.push(i), i.tool?.child && walk(i.tool.child.items)));
    walk(conv.items);
    const at = flat.filter((i) => i.stream === hit.stream && i.ts !== null && i.ts <= hit.ts).sort((a, b) => (a.ts! < b.ts! ? -1 : 1)).pop()!;
    const { page, errors } = await open("/search");
    await page.locator("input[name=q]").fill("marot");
    await page.locator("input[name=q]").press("Enter");
    await page.waitForURL(/q=marot/);
    const links = page.locator("[data-testid=event-hits] a.hit-link");
    await poll(() => links.count()).toBe(hits.events.length);
    await shot(page, "search");
    const link = links.filter({ has: page.locator(`text=${FIXTURE_SESSION.slice(0, 8)}`) }).first();
    const href = await link.getAttribute("href");
    expect(href).toContain(`/session/${FIXTURE_SESSION}?at=`);
    await link.click();
    await page.waitForURL(/\/session\//);
    const target = page.locator(".item.hit");
    await target.waitFor();
    expect(await target.getAttribute("data-ts")).toBe(at.ts);
    expect(await target.getAttribute("data-stream")).toBe(hit.stream);
    expect(await target.evaluate((e) => Number(e.closest("section.turn")?.getAttribute("data-turn")))).toBe(at.turn);
    await poll(() => target.evaluate((e) => { const r = e.getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0; })).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("fleet: the roster, the held lease and the declared intent", async () => {
    const { page, errors } = await open("/fleet");
    await page.getByTestId("roster").locator("tbody tr").first().waitFor();
    expect(await page.getByTestId("roster").locator("tbody").textContent()).toContain("host-t");
    expect(await page.getByTestId("leases").locator("tbody").textContent()).toContain("apps/reader");
    expect(await page.getByTestId("intents").locator("tbody").textContent()).toContain("lake:apps/reader/src/internal/serve");
    await shot(page, "fleet");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("the API answers the CLI's --json exactly", async () => {
    const get = async (p: string) => JSON.parse((await httpGet(new URL(p, served.url).href)).body) as unknown;
    expect(await get("/api/usage/daily")).toEqual(cli(["usage", "daily", "--json"]));
    expect(await get("/api/usage/monthly?by=runtime")).toEqual(cli(["usage", "monthly", "--json", "--by", "runtime"]));
    expect(await get("/api/usage/weekly")).toEqual(cli(["usage", "weekly", "--json"]));
    // --breakdown: each row's parts add up to the row, one part per model of the row.
    expect(await get("/api/usage/daily?by=model")).toEqual(cli(["usage", "daily", "--json", "--by", "model"]));
    const by = cli<{ daily: (Row & { breakdown: Row[]; models: string[] })[] }>(["usage", "daily", "--json", "--breakdown"]);
    expect(await get("/api/usage/daily?breakdown=1")).toEqual(by);
    const plain = cli<{ daily: Row[] }>(["usage", "daily", "--json"]);
    expect(by.daily.map(({ breakdown: _b, ...rest }) => rest)).toEqual(plain.daily);
    for (const d of by.daily) {
      expect(d.breakdown.reduce((a, b) => a + Number(b.total_tokens ?? 0), 0), String(d.date)).toBe(d.total_tokens);
      expect(new Set(d.breakdown.map((b) => b.model)).size).toBe(d.breakdown.length);
    }
    expect(await get("/api/usage/session?since=2026-01-01")).toEqual(cli(["usage", "session", "--json", "--since", "2026-01-01"]));
    expect(await get("/api/sessions")).toEqual(cli(["sessions", "--json"]));
    expect(await get(`/api/show/${FIXTURE_SESSION.slice(0, 8)}?from=events`)).toEqual(cli(["show", FIXTURE_SESSION.slice(0, 8), "--from", "events", "--json"]));
    expect(await get("/api/search?q=DuckDB+zstd")).toEqual(cli(["search", "DuckDB", "zstd", "--json"]));
    const bad = await httpGet(new URL("/api/usage/daily?since=someday", served.url).href);
    expect(bad.status).toBe(400);
    expect((JSON.parse(bad.body) as { error: { code: string; message: string } }).error).toEqual({ code: "Usage", message: '--since "someday": expected a date (yyyy-mm-dd or yyyymmdd), today, yesterday, Nd or Nw (N days or weeks before today)' });
    expect(await getStatus(new URL("/api/show/no-such-session", served.url).href)).toBe(404);
    expect(await getStatus(new URL("/api/nothing", served.url).href)).toBe(404);
  });
});

describe("lake-reader serve refuses what it must", () => {
  it("a non-loopback bind without a token is refused (exit 2)", () => {
    const r = spawnSync(process.execPath, [READER, "serve", "--host", "0.0.0.0", "--port", "0", ...fleet.args], { encoding: "utf8", env: { PATH: process.env.PATH, ...fleet.env }, timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^lake-reader serve: --host 0\.0\.0\.0 is not a loopback address: .*--token/);
  });

  it("a wrong Host header gets 403 (DNS rebinding); writes get 405", async () => {
    const port = new URL(served.url).port;
    expect(await getStatus(new URL("/api/sessions", served.url).href, { host: "evil.example" })).toBe(403);
    expect(await getStatus(new URL("/", served.url).href, { host: `evil.example:${port}` })).toBe(403);
    expect(await getStatus(new URL("/", served.url).href, { host: `localhost:${port}` })).toBe(200);
    expect(await getStatus(new URL("/api/sessions", served.url).href, {}, "POST")).toBe(405);
    expect(await getStatus(new URL("/api/sessions", served.url).href, {}, "DELETE")).toBe(405);
  });

  it("with --token, requests without it get 401; the token opens the UI once and becomes a cookie", async () => {
    const s = await startServe(["--token", "s3cret-token", ...fleet.args], fleet.env);
    try {
      expect(await getStatus(new URL("/api/fleet", s.url).href)).toBe(401);
      expect(await getStatus(new URL("/api/fleet", s.url).href, { authorization: "Bearer wrong" })).toBe(401);
      expect(await getStatus(new URL("/api/fleet", s.url).href, { authorization: "Bearer s3cret-token" })).toBe(200);
      const page = await context.newPage();
      await page.goto(new URL("/fleet?token=s3cret-token", s.url).href);
      expect(new URL(page.url()).search).toBe("");
      await page.getByTestId("roster").locator("tbody tr").first().waitFor();
      await page.close();
    } finally {
      await s.stop();
    }
  });
});

describe("lake-reader serve keeps folded conversations", () => {
  it("/api/show answers its kept fold until the session's landed files or rounds change", async () => {
    const root = tempDir("reader-serve-root");
    cpSync(fleet.root, root, { recursive: true });
    const s = await startServe(["--store", fleet.store, "--root", root], fleet.env);
    const flat = (items: readonly Item[], out: Item[] = []): Item[] => (items.forEach((i) => (out.push(i), i.tool?.child && flat(i.tool.child.items, out))), out);
    try {
      const url = new URL(`/api/show/${FIXTURE_SESSION}`, s.url).href;
      const first = JSON.parse((await httpGet(url)).body) as Conv;
      expect(first.source).toBe("chain");
      expect(flat(first.items).some((i) => i.kind === "gone")).toBe(false);
      expect(JSON.parse((await httpGet(url)).body)).toEqual(first);
      // A landed file of the session goes: its records show as gone on the next call.
      const main = join(root, FIXTURE_SESSION, "streams", "main");
      const landed = readdirSync(main).filter((n) => n.endsWith(".sd")).sort();
      expect(landed.length).toBeGreaterThan(1);
      rmSync(join(main, landed[landed.length - 1]!));
      const after = JSON.parse((await httpGet(url)).body) as Conv;
      expect(flat(after.items).filter((i) => i.kind === "gone").length).toBeGreaterThan(0);
      // Its rounds go: the conversation comes from the fleet's events.
      rmSync(join(root, "_conversations", FIXTURE_SESSION, "rounds"), { recursive: true });
      expect((JSON.parse((await httpGet(url)).body) as Conv).source).toBe("events");
    } finally {
      await s.stop();
    }
  });
});
