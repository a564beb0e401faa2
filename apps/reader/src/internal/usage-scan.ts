// The usage a report counts, from a fleet: each compacted partition's usage rollup where it can be
// added as it is (@lake/events overlappingRollups), and the rows of everything else — un-compacted
// bronze, partitions without a rollup, and partitions that share a session or a usage key with
// something else — read by @lake/segments and counted by countUsage. Neither DuckDB nor the record
// schema loads unless rows are read: a compacted fleet's daily report reads a few small JSON files.
import { readFileSync } from "node:fs";
import type { UsageContribution, UsageRecord } from "@lake/events/usage";
import { ReaderError } from "./errors.js";
import type { BronzeFile, CompactedFile, FleetFiles } from "./fleet.js";

/** Filters of a usage report. */
export interface UsageFilters {
  /** First day included, yyyy-mm-dd (in the report's zone: contributions' `day`). */
  readonly since?: string | undefined;
  /** Last day included, yyyy-mm-dd. */
  readonly until?: string | undefined;
  readonly runtimes?: readonly string[] | undefined;
  readonly models?: readonly string[] | undefined;
}

/** Options of {@link scanUsage}. */
export interface ScanOptions {
  /** Main-thread work to run while DuckDB reads the files (e.g. loading the report code). */
  readonly meanwhile?: (() => Promise<unknown>) | undefined;
}

/** Read the usage-bearing rows of bronze segments and compacted parts, in read order (@lake/segments readUsageRecords). */
export async function scanUsage(files: Pick<FleetFiles, "storeUrl" | "fetch">, bronze: readonly BronzeFile[], compacted: readonly CompactedFile[], options: ScanOptions = {}): Promise<UsageRecord[]> {
  const storeUrl = files.storeUrl;
  if (bronze.length === 0 && compacted.length === 0) {
    await options.meanwhile?.();
    return [];
  }
  // A damaged file (its hash does not check) is left out; fetch named it in `damaged`.
  const bad = await files.fetch([...bronze.map((b) => b.path), ...compacted.map((c) => c.path)]);
  if (bad.size > 0) {
    bronze = bronze.filter((b) => !bad.has(b.path));
    compacted = compacted.filter((c) => !bad.has(c.path));
  }
  const { isSegmentError, readUsageRecords } = await import("@lake/segments");
  try {
    return await readUsageRecords(
      // Local paths sort as their store keys do (fleet.ts names mirrored files so): read order.
      [...bronze.map((b) => ({ path: b.path, layout: "bronze" as const, runtime: b.runtime })), ...compacted.map((c) => ({ path: c.path, layout: "compacted" as const }))],
      { meanwhile: options.meanwhile, label: storeUrl },
    );
  } catch (e) {
    if (isSegmentError(e)) throw new ReaderError("Corrupt", e.message, { data: { file: storeUrl }, cause: e });
    throw e;
  }
}

/**
 * The usage contributions of a fleet, counted as countUsage counts every followed row — of every
 * runtime: `runtimes` filters the counted contributions (as the report filters days and models), so
 * the answer is the same whether a partition is added from its rollup or read from its rows. With
 * `rowsOnly` (5-hour blocks need every contribution's own time) rollups are not used.
 */
export async function fleetUsage(
  files: FleetFiles,
  options: ScanOptions & {
    runtimes?: readonly string[] | undefined;
    rowsOnly?: boolean;
    /** Whether a rollup's sums can be priced exactly (else its partition is counted from its rows); default yes. */
    priceable?: ((r: import("@lake/events/usage").UsageRollup) => boolean) | undefined;
  } = {},
): Promise<UsageContribution[]> {
  const ev = await import("@lake/events/usage");
  const want = options.runtimes && options.runtimes.length ? new Set(options.runtimes) : undefined;
  // A rollup stands for its files: a compacted partition's parts, or a bronze directory's segments.
  const usable: { parts: readonly CompactedFile[]; segments: readonly string[]; rollup: import("@lake/events/usage").UsageRollup }[] = [];
  const fromRows: CompactedFile[] = [];
  const rollupSegments = new Set<string>();
  // A rollup whose bytes do not hash to what its marker (or its name) records is not read: its
  // files are counted from their rows (fetch named it in `damaged`).
  const wanted = options.rowsOnly ? [] : [...files.partitions.flatMap((p) => (p.usage === undefined ? [] : [p.usage.json, p.usage.keys])), ...files.bronzeRollups.flatMap((r) => [r.json, r.keys])];
  const bad = wanted.length ? await files.fetch(wanted) : new Set<string>();
  const decode = (json: string, keysPath: string, key: string): import("@lake/events/usage").UsageRollup | undefined => {
    let text: string;
    let keys: Buffer;
    try {
      text = readFileSync(json, "utf8");
      keys = readFileSync(keysPath);
    } catch (e) {
      throw new ReaderError("Io", `${key}: cannot read: ${(e as Error).message}`, { data: { file: key }, cause: e });
    }
    try {
      const rollup = ev.decodeUsageRollup(text, keys, key);
      return options.priceable && !options.priceable(rollup) ? undefined : rollup;
    } catch (e) {
      // A rollup of a newer writer may count differently, an older one cannot be priced exactly:
      // its files are counted from their rows.
      if (ev.isEventsError(e) && (e.code === "NewerRollup" || e.code === "OlderRollup")) return undefined;
      if (ev.isEventsError(e)) throw new ReaderError("Corrupt", e.message, { data: { file: key }, cause: e });
      throw e;
    }
  };
  for (const p of files.partitions) {
    const rollup = options.rowsOnly || p.usage === undefined || bad.has(p.usage.json) || bad.has(p.usage.keys) ? undefined : decode(p.usage.json, p.usage.keys, p.usage.key);
    if (rollup === undefined) fromRows.push(...p.parts);
    else usable.push({ parts: p.parts, segments: [], rollup });
  }
  for (const r of options.rowsOnly ? [] : files.bronzeRollups) {
    const rollup = bad.has(r.json) || bad.has(r.keys) ? undefined : decode(r.json, r.keys, r.key);
    if (rollup === undefined) continue;
    usable.push({ parts: [], segments: r.segments, rollup });
    for (const s of r.segments) rollupSegments.add(s);
  }
  // Everything read from rows (partitions without a usable rollup, bronze) first: its sessions and
  // keys decide which rollups cannot be added as they are. One scan, in read order (compacted keys
  // sort before bronze keys); read again, with the overlapping rollups' files, only when there are any.
  const rowBronze = (extra: ReadonlySet<string>) => files.bronze.filter((b) => !rollupSegments.has(b.path) || extra.has(b.path));
  let records = await scanUsage(files, rowBronze(new Set()), fromRows, { meanwhile: options.meanwhile });
  const overlap = usable.length ? ev.overlappingRollups(usable.map((u) => u.rollup), records.length ? ev.usageIdentity(records) : undefined) : new Set<number>();
  if (overlap.size) {
    const back = usable.filter((_, i) => overlap.has(i));
    records = await scanUsage(files, rowBronze(new Set(back.flatMap((u) => u.segments))), [...fromRows, ...back.flatMap((u) => u.parts)]);
  }
  const contributions: UsageContribution[] = [];
  usable.forEach((u, i) => {
    if (!overlap.has(i)) for (const c of ev.rollupContributions(u.rollup)) contributions.push(c);
  });
  for (const c of ev.countUsage(records)) contributions.push(c);
  return want ? contributions.filter((c) => want.has(c.runtime)) : contributions;
}
