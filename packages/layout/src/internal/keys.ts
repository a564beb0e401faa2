// The fleet store key layout (docs/spec/fleet-store-layout.md): builders, parsers and partition-value
// validation. Every key is relative to the fleet root.
import { LayoutError } from "./errors.js";
import { isUlid } from "./ulid.js";
import { sha256Hex } from "./util.js";

/** The partition values of one session directory. */
export interface SessionPartition {
  /** UTC date, yyyy-mm-dd. */
  readonly dt: string;
  readonly fleet: string;
  readonly runtime: string;
  readonly agent: string;
  readonly session: string;
}

/** The partition values of one compacted (date, fleet) partition. */
export interface CompactedPartition {
  readonly dt: string;
  readonly fleet: string;
}

/** A key parsed back into what it names. */
export type ParsedKey =
  | { readonly kind: "fleet" }
  | { readonly kind: "agent"; readonly agent: string }
  | { readonly kind: "intent"; readonly agent: string }
  | { readonly kind: "lease"; readonly resourceKey: string }
  | ({ readonly kind: "segment"; readonly seq: number } & SessionPartition)
  | ({ readonly kind: "segment-usage"; readonly seq: number; readonly file: "json" | "keys"; readonly sha256: string } & SessionPartition)
  | ({ readonly kind: "sealed" } & SessionPartition)
  | ({ readonly kind: "digest" } & SessionPartition)
  | ({ readonly kind: "compacted-part"; readonly gen: string; readonly part: number } & CompactedPartition)
  | ({ readonly kind: "compacted-usage"; readonly gen: string; readonly file: "usage.json" | "usage.keys" } & CompactedPartition)
  | ({ readonly kind: "compacted-marker" } & CompactedPartition)
  | { readonly kind: "claim-event"; readonly dt: string; readonly agent: string; readonly ulid: string }
  | { readonly kind: "fleet-claim"; readonly claimId: string }
  | { readonly kind: "snapshot-blob"; readonly contentHash: string }
  | { readonly kind: "snapshot-latest" }
  | { readonly kind: "quarantine"; readonly agent: string; readonly date: string; readonly ulid: string }
  | { readonly kind: "tombstone"; readonly session: string };

const VALUE_RE = /^[A-Za-z0-9][A-Za-z0-9._@+~:-]{0,199}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const GEN_RE = /^[0-9a-f]{16,64}$/;

function invalid(field: string, value: unknown, reason: string): never {
  throw new LayoutError("InvalidKey", `invalid ${field} ${JSON.stringify(value)}: ${reason}`, { data: { detail: field } });
}

/**
 * Throw InvalidKey unless `value` is a safe partition value or id: 1-200 characters from
 * `A-Z a-z 0-9 . _ @ + ~ : -`, starting with a letter or digit (so no "/", "=", "..", spaces or NUL).
 */
export function validatePartitionValue(field: string, value: string): string {
  if (typeof value !== "string" || value.length === 0) invalid(field, value, "empty");
  if (value.length > 200) invalid(field, value, "longer than 200 characters");
  if (!VALUE_RE.test(value)) {
    const c = [...value].find((ch) => !/[A-Za-z0-9._@+~:-]/.test(ch));
    invalid(field, value, c === undefined ? "must start with a letter or digit" : `character ${JSON.stringify(c)} not allowed`);
  }
  return value;
}

/** Throw InvalidKey unless `value` is a real calendar date written yyyy-mm-dd. */
export function validateDate(field: string, value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) invalid(field, value, "expected yyyy-mm-dd");
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (d.toISOString().slice(0, 10) !== value) invalid(field, value, "not a calendar date");
  return value;
}

/** The UTC date (yyyy-mm-dd) of a time, for `dt=` partitions. */
export function utcDate(t: Date | number = Date.now()): string {
  return new Date(t).toISOString().slice(0, 10);
}

function seqField(field: string, n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > 999_999) invalid(field, n, "expected an integer 0..999999");
  return String(n).padStart(6, "0");
}

function hex64(field: string, v: string): string {
  if (!HEX64.test(v)) invalid(field, v, "expected 64 lowercase hex digits");
  return v;
}

/** resource_key(repo, resource): SHA-256 hex over UTF-8 `repo`, a NUL byte, UTF-8 `resource`. */
export function resourceKey(repo: string, resource: string): string {
  if (repo.includes("\0") || resource.includes("\0")) invalid("resource", `${repo}\\0${resource}`, "NUL byte inside repo or resource");
  return sha256Hex(Buffer.concat([Buffer.from(repo, "utf8"), Buffer.from([0]), Buffer.from(resource, "utf8")]));
}

/** `fleet.json`. */
export const FLEET_KEY = "fleet.json";
/** `snapshot/latest.json`. */
export const SNAPSHOT_LATEST_KEY = "snapshot/latest.json";
/** Prefixes of the tree. */
export const PREFIXES = {
  agents: "live/agents/",
  intents: "live/intents/",
  leases: "live/leases/",
  sessions: "sessions/",
  compacted: "sessions/compacted/",
  claimEvents: "claims/events/",
  fleetClaims: "claims/fleet/",
  snapshot: "snapshot/",
  quarantine: "quarantine/",
  tombstones: "tombstones/",
} as const;

/** `live/agents/<agent_id>.json`: an agent's roster heartbeat. */
export function agentKey(agentId: string): string {
  return `${PREFIXES.agents}${validatePartitionValue("agent_id", agentId)}.json`;
}
/** `live/intents/<agent_id>.json`: an agent's declared intents. */
export function intentKey(agentId: string): string {
  return `${PREFIXES.intents}${validatePartitionValue("agent_id", agentId)}.json`;
}
/** `live/leases/<resource_key>.json`, from a resource key (64 hex digits). */
export function leaseKey(resourceKeyHex: string): string {
  return `${PREFIXES.leases}${hex64("resource_key", resourceKeyHex)}.json`;
}

/** `sessions/dt=…/fleet=…/runtime=…/agent=…/session=…/` (with the trailing slash). */
export function sessionPrefix(p: SessionPartition): string {
  return (
    `${PREFIXES.sessions}dt=${validateDate("dt", p.dt)}/fleet=${validatePartitionValue("fleet", p.fleet)}` +
    `/runtime=${validatePartitionValue("runtime", p.runtime)}/agent=${validatePartitionValue("agent", p.agent)}` +
    `/session=${validatePartitionValue("session", p.session)}/`
  );
}
/** `…/session=…/seg-NNNNNN.parquet` (six digits, 0..999999). */
export function segmentKey(p: SessionPartition, seq: number): string {
  return `${sessionPrefix(p)}seg-${seqField("seq", seq)}.parquet`;
}
/**
 * The usage rollup push writes beside a segment, of that segment's directory up to it (segments 0..seq):
 * `…/session=…/seg-NNNNNN.usage.<sha256>.json` and `….usage.<sha256>.keys` (@lake/events' two rollup
 * objects), each named by the SHA-256 of its own bytes.
 */
export function segmentUsageKey(p: SessionPartition, seq: number, file: "json" | "keys", sha256: string): string {
  if (!HEX64.test(sha256)) throw new LayoutError("InvalidKey", `invalid sha256 ${JSON.stringify(sha256)}: expected 64 lowercase hex digits`, { data: { detail: "sha256" } });
  return `${sessionPrefix(p)}seg-${seqField("seq", seq)}.usage.${sha256}.${file}`;
}
/** `…/session=…/_SEALED`. */
export function sealedKey(p: SessionPartition): string {
  return `${sessionPrefix(p)}_SEALED`;
}
/** `…/session=…/digest.json`. */
export function digestKey(p: SessionPartition): string {
  return `${sessionPrefix(p)}digest.json`;
}
/** `sessions/compacted/dt=…/fleet=…/` (with the trailing slash). */
export function compactedPrefix(p: CompactedPartition): string {
  return `${PREFIXES.compacted}dt=${validateDate("dt", p.dt)}/fleet=${validatePartitionValue("fleet", p.fleet)}/`;
}
/** `sessions/compacted/dt=…/fleet=…/gen=<hash>/part-NNNNNN.parquet`; gen is 16-64 lowercase hex digits. */
export function compactedPartKey(p: CompactedPartition, gen: string, part: number): string {
  if (!GEN_RE.test(gen)) invalid("gen", gen, "expected 16-64 lowercase hex digits");
  return `${compactedPrefix(p)}gen=${gen}/part-${seqField("part", part)}.parquet`;
}
/**
 * `sessions/compacted/dt=…/fleet=…/gen=<hash>/usage.json` (or `usage.keys`): the generation's
 * usage rollup, its document and its key hashes (@lake/events).
 */
export function compactedUsageKey(p: CompactedPartition, gen: string, file: "usage.json" | "usage.keys" = "usage.json"): string {
  if (!GEN_RE.test(gen)) invalid("gen", gen, "expected 16-64 lowercase hex digits");
  if (file !== "usage.json" && file !== "usage.keys") invalid("file", file, "expected usage.json or usage.keys");
  return `${compactedPrefix(p)}gen=${gen}/${file}`;
}
/** `sessions/compacted/dt=…/fleet=…/_COMPACTED`. */
export function compactedMarkerKey(p: CompactedPartition): string {
  return `${compactedPrefix(p)}_COMPACTED`;
}
/** `claims/events/dt=…/agent=…/<ulid>.json`. */
export function claimEventKey(dt: string, agentId: string, id: string): string {
  if (!isUlid(id)) invalid("ulid", id, "expected a 26-character ULID");
  return `${PREFIXES.claimEvents}dt=${validateDate("dt", dt)}/agent=${validatePartitionValue("agent", agentId)}/${id}.json`;
}
/** `claims/fleet/<claim_id>.json`. */
export function fleetClaimKey(claimId: string): string {
  return `${PREFIXES.fleetClaims}${validatePartitionValue("claim_id", claimId)}.json`;
}
/** `snapshot/<sha256>.sqlite`. */
export function snapshotBlobKey(contentHash: string): string {
  return `${PREFIXES.snapshot}${hex64("content_hash", contentHash)}.sqlite`;
}
/** `tombstones/<session_id>.json`: a session forgotten in this fleet (`lake-maint forget`); a push of it is refused. */
export function tombstoneKey(sessionId: string): string {
  return `${PREFIXES.tombstones}${validatePartitionValue("session", sessionId)}.json`;
}

/** `quarantine/<agent_id>/<date>/<ulid>.json`. */
export function quarantineKey(agentId: string, date: string, id: string): string {
  if (!isUlid(id)) invalid("ulid", id, "expected a 26-character ULID");
  return `${PREFIXES.quarantine}${validatePartitionValue("agent_id", agentId)}/${validateDate("date", date)}/${id}.json`;
}

function kv(seg: string | undefined, name: string): string | undefined {
  if (seg === undefined || !seg.startsWith(name + "=")) return undefined;
  return seg.slice(name.length + 1);
}

/**
 * Parse a key of the layout back into what it names, or undefined when the key is not one the
 * layout defines (partition values are validated the same way the builders validate them).
 */
export function parseKey(key: string): ParsedKey | undefined {
  try {
    return parseStrict(key);
  } catch {
    return undefined;
  }
}

function parseStrict(key: string): ParsedKey | undefined {
  const s = key.split("/");
  const json = (name: string | undefined): string | undefined => (name?.endsWith(".json") ? name.slice(0, -5) : undefined);
  if (key === FLEET_KEY) return { kind: "fleet" };
  if (key === SNAPSHOT_LATEST_KEY) return { kind: "snapshot-latest" };
  if (s[0] === "live" && s.length === 3) {
    const id = json(s[2]);
    if (id === undefined) return undefined;
    if (s[1] === "agents") return { kind: "agent", agent: validatePartitionValue("agent_id", id) };
    if (s[1] === "intents") return { kind: "intent", agent: validatePartitionValue("agent_id", id) };
    if (s[1] === "leases") return { kind: "lease", resourceKey: hex64("resource_key", id) };
    return undefined;
  }
  if (s[0] === "sessions" && s[1] === "compacted") {
    const dt = kv(s[2], "dt");
    const fleet = kv(s[3], "fleet");
    if (dt === undefined || fleet === undefined) return undefined;
    const p = { dt: validateDate("dt", dt), fleet: validatePartitionValue("fleet", fleet) };
    if (s.length === 5 && s[4] === "_COMPACTED") return { kind: "compacted-marker", ...p };
    const gen = kv(s[4], "gen");
    const m = /^part-(\d{6})\.parquet$/.exec(s[5] ?? "");
    if (s.length === 6 && gen !== undefined && GEN_RE.test(gen) && m) return { kind: "compacted-part", ...p, gen, part: Number(m[1]) };
    if (s.length === 6 && gen !== undefined && GEN_RE.test(gen) && (s[5] === "usage.json" || s[5] === "usage.keys")) return { kind: "compacted-usage", ...p, gen, file: s[5] };
    return undefined;
  }
  if (s[0] === "sessions" && s.length === 7) {
    const [dt, fleet, runtime, agent, session] = [kv(s[1], "dt"), kv(s[2], "fleet"), kv(s[3], "runtime"), kv(s[4], "agent"), kv(s[5], "session")];
    if (dt === undefined || fleet === undefined || runtime === undefined || agent === undefined || session === undefined) return undefined;
    const p: SessionPartition = {
      dt: validateDate("dt", dt),
      fleet: validatePartitionValue("fleet", fleet),
      runtime: validatePartitionValue("runtime", runtime),
      agent: validatePartitionValue("agent", agent),
      session: validatePartitionValue("session", session),
    };
    const name = s[6]!;
    if (name === "_SEALED") return { kind: "sealed", ...p };
    if (name === "digest.json") return { kind: "digest", ...p };
    const u = /^seg-(\d{6})\.usage\.([0-9a-f]{64})\.(json|keys)$/.exec(name);
    if (u) return { kind: "segment-usage", ...p, seq: Number(u[1]), file: u[3] as "json" | "keys", sha256: u[2]! };
    const m = /^seg-(\d{6})\.parquet$/.exec(name);
    return m ? { kind: "segment", ...p, seq: Number(m[1]) } : undefined;
  }
  if (s[0] === "claims" && s[1] === "events" && s.length === 5) {
    const dt = kv(s[2], "dt");
    const agent = kv(s[3], "agent");
    const id = json(s[4]);
    if (dt === undefined || agent === undefined || id === undefined || !isUlid(id)) return undefined;
    return { kind: "claim-event", dt: validateDate("dt", dt), agent: validatePartitionValue("agent", agent), ulid: id };
  }
  if (s[0] === "claims" && s[1] === "fleet" && s.length === 3) {
    const id = json(s[2]);
    return id === undefined ? undefined : { kind: "fleet-claim", claimId: validatePartitionValue("claim_id", id) };
  }
  if (s[0] === "snapshot" && s.length === 2 && s[1]!.endsWith(".sqlite")) {
    return { kind: "snapshot-blob", contentHash: hex64("content_hash", s[1]!.slice(0, -7)) };
  }
  if (s[0] === "tombstones" && s.length === 2) {
    const id = json(s[1]);
    return id === undefined ? undefined : { kind: "tombstone", session: validatePartitionValue("session", id) };
  }
  if (s[0] === "quarantine" && s.length === 4) {
    const id = json(s[3]);
    if (id === undefined || !isUlid(id)) return undefined;
    return { kind: "quarantine", agent: validatePartitionValue("agent_id", s[1]!), date: validateDate("date", s[2]!), ulid: id };
  }
  return undefined;
}
