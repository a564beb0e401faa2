// The claim event (claims/events/…) and fleet claim (claims/fleet/…) codecs: golden bytes, strict decoding.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkClaimEvent, decodeClaimEvent, decodeFleetClaim, encodeClaimEvent, encodeFleetClaim, isLayoutError } from "../src/index.js";

const event = { agent: "host-a", proposed_at: "2026-02-10T10:00:00.000Z", repo: "lake", subject: "build", text: "Use pnpm", kind: "fact" };
const eventBytes = '{"agent":"host-a","kind":"fact","proposed_at":"2026-02-10T10:00:00.000Z","repo":"lake","subject":"build","text":"Use pnpm"}\n';
const claim = { claim_id: "c257cd223f6c46326ac81a47d479bb735", ...event, promoted_at: "2026-02-10T11:00:00.000Z", source: "claims/events/dt=2026-02-10/agent=host-a/01J0000000000000000000000B.json", revision: 1, epoch: 2 };

describe("claim codecs", () => {
  it("encode to canonical JSON (golden bytes) and decode back", () => {
    const bytes = encodeClaimEvent(event);
    expect(Buffer.from(bytes).toString("utf8")).toBe(eventBytes);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe("0bb8dd811ba738637140c75934f917b07834839ece31235e31fc2e51b7ce1e40");
    expect(decodeClaimEvent("k", bytes, "host-a")).toEqual(event);
    expect(decodeFleetClaim("k", encodeFleetClaim(claim), claim.claim_id)).toEqual(claim);
  });

  it("fills defaults, normalises the time, and refuses bad proposals with a reason", () => {
    expect(checkClaimEvent({ agent: "a1", proposed_at: "2026-02-10T10:00:00Z", text: "t" })).toEqual({ agent: "a1", proposed_at: "2026-02-10T10:00:00.000Z", repo: "", subject: "", text: "t", kind: "fact" });
    expect(checkClaimEvent({ ...event, text: " " })).toBe("text is empty");
    expect(checkClaimEvent({ ...event, kind: "Bad Kind" })).toMatch(/^kind "Bad Kind" is not/);
    expect(checkClaimEvent({ ...event, text: "a\u0000b" })).toBe("text has control characters");
    expect(checkClaimEvent({ ...event, subject: "two\nlines" })).toMatch(/^subject longer than 200 characters or not one line/);
    expect(checkClaimEvent(event, "host-b")).toMatch(/does not match the key's agent "host-b"/);
    let err: unknown;
    try {
      decodeClaimEvent("claims/events/x.json", Buffer.from("{}"));
    } catch (e) {
      err = e;
    }
    expect(isLayoutError(err, "Corrupt")).toBe(true);
    expect((err as Error).message).toMatch(/^claims\/events\/x\.json: /);
  });
});
