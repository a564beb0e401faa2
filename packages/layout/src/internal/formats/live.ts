// Strict decoders of the live/ control objects: leases, roster heartbeats, intents. Their writers
// are the CAS loops of lease.ts and roster.ts (casUpdate adds nonce, prev_nonces).
import { validatePartitionValue } from "../keys.js";
import { Fields, jsonObject } from "./json.js";

/** A lease as stored at live/leases/<resource_key>.json (without the nonce fields casUpdate adds). */
export interface LeaseObject {
  readonly status: "held" | "free";
  /** Holder (status held) or last holder (status free). */
  readonly owner: string;
  /** Fencing token: +1 on every acquisition; kept by renew and release. */
  readonly epoch: number;
  /** ISO-8601 UTC, by the writer's clock. For a free lease, when it was released. */
  readonly expires_at: string;
  readonly repo: string;
  readonly resource: string;
  /** When the current epoch was acquired (writer's clock). */
  readonly acquired_at: string;
}

/** Decode a lease object strictly; Corrupt (naming `key`) unless it is one. */
export function decodeLease(key: string, body: Uint8Array): LeaseObject {
  const f: Fields = new Fields(key, jsonObject(key, body));
  const status = f.str("status");
  if (status !== "held" && status !== "free") f.fail(`status ${JSON.stringify(status)} is not held or free`);
  return { status, owner: f.str("owner"), epoch: f.int("epoch"), expires_at: f.time("expires_at"), repo: f.str("repo"), resource: f.str("resource"), acquired_at: f.time("acquired_at") };
}

function agentOf(f: Fields, agentId: string | undefined): string {
  const id = f.str("agent_id");
  try {
    validatePartitionValue("agent_id", id);
  } catch (e) {
    f.fail((e as Error).message);
  }
  if (agentId !== undefined && id !== agentId) f.fail(`agent_id ${JSON.stringify(id)} does not match the key's ${JSON.stringify(agentId)}`);
  return id;
}

/** A roster heartbeat as stored at live/agents/<agent_id>.json (without nonce fields). */
export interface RosterObject {
  readonly agent_id: string;
  readonly runtime: string;
  readonly repo: string;
  readonly branch: string;
  /** The tool the agent is running now ("" when idle). */
  readonly tool: string;
  /** "active", or "left" after `leaveRoster`. */
  readonly status: "active" | "left";
  /** First heartbeat of this run of the agent (writer's clock). */
  readonly started_at: string;
  readonly updated_at: string;
  readonly expires_at: string;
}

/** Decode a roster heartbeat strictly; `agentId`: the key's agent, which `agent_id` must equal. */
export function decodeRosterEntry(key: string, body: Uint8Array, agentId?: string): RosterObject {
  const f: Fields = new Fields(key, jsonObject(key, body));
  const status = f.str("status");
  if (status !== "active" && status !== "left") f.fail(`status ${JSON.stringify(status)} is not active or left`);
  return {
    agent_id: agentOf(f, agentId),
    runtime: f.str("runtime"),
    repo: f.str("repo"),
    branch: f.str("branch"),
    tool: f.str("tool"),
    status,
    started_at: f.time("started_at"),
    updated_at: f.time("updated_at"),
    expires_at: f.time("expires_at"),
  };
}

/** One declared intent: a resource the agent is about to touch. */
export interface IntentItem {
  readonly repo: string;
  readonly resource: string;
  /** resourceKey(repo, resource): the same key a lease on it would use. */
  readonly resource_key: string;
}

/** An agent's intents as stored at live/intents/<agent_id>.json (without nonce fields). */
export interface IntentObject {
  readonly agent_id: string;
  readonly intents: readonly IntentItem[];
  readonly note: string;
  readonly declared_at: string;
  readonly expires_at: string;
}

/** Decode an intents object strictly; `agentId`: the key's agent, which `agent_id` must equal. */
export function decodeIntentRecord(key: string, body: Uint8Array, agentId?: string): IntentObject {
  const f: Fields = new Fields(key, jsonObject(key, body));
  return {
    agent_id: agentOf(f, agentId),
    intents: f.list("intents").map((i) => ({ repo: i.str("repo"), resource: i.str("resource"), resource_key: i.hex64("resource_key") })),
    note: f.str("note"),
    declared_at: f.time("declared_at"),
    expires_at: f.time("expires_at"),
  };
}
