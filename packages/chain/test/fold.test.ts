import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildRound, encodeRound, foldRounds, isChainError, type Conversation, type Round, type SessionIndex } from "@lake/chain";
import { MAIN_STREAM } from "@lake/events";
import { cutIndex, indexOf, rangeIndex, sampleFiles, type FileSpec, type Rec } from "./support/landed.js";

/** Fold the chain obtained by parsing `index` at each cut point in turn. */
function chainAt(index: SessionIndex, cuts: number[], id = "s1"): { rounds: Round[]; conv: Conversation } {
  const rounds: Round[] = [];
  for (const cut of [...cuts, index.indexedSeq]) {
    const body = buildRound(id, rounds, cutIndex(index, cut));
    if (body) rounds.push(encodeRound(body).round);
  }
  return { rounds, conv: foldRounds(id, rounds) };
}

/** The conversation without the round bookkeeping, for comparing chains cut differently. */
function shape(c: Conversation): unknown {
  return { main: c.main, detached: c.detached, calls: c.calls, messages: c.messages, compactions: c.compactions, tombstones: c.tombstones.map((t) => t.seq), through: c.throughSeq };
}

describe("round builder + fold", () => {
  const index = indexOf(sampleFiles());

  it("says turns, call/result pairs, launches, steering, queue, compaction from the index alone", () => {
    const { rounds, conv } = chainAt(index, []);
    expect(rounds).toHaveLength(1);
    const r = rounds[0] as Round;
    expect(r.range).toEqual({ from: 1, to: 4 });
    expect(r.files.map((f) => f.seq)).toEqual([1, 2, 3, 4]);
    expect(conv.main.turns.map((t) => t.records.map((x) => `${x.seq}.${x.row}`))).toEqual([
      ["1.0", "1.1", "1.2", "1.3", "3.0", "3.1", "3.2", "3.3", "3.4"],
      ["3.5", "3.6", "3.7", "3.8"],
    ]);
    const t1 = conv.calls.find((c) => c.id === "t1");
    expect(t1).toMatchObject({ call: { seq: 1, row: 2 }, result: { seq: 3, row: 2 }, fragments: [{ seq: 1, row: 3 }], stream: "main", turn: 0 });
    expect(t1?.children.map((c) => c.name)).toEqual(["agentA"]);
    expect(conv.streams.agentA?.launch).toEqual({ child: "agentA", callId: "t1", at: { seq: 3, row: 2 }, anchor: false });
    expect(conv.streams.agentA?.turns[0]?.calls.map((c) => [c.id, c.result])).toEqual([["tx", { seq: 2, row: 3 }]]);
    expect(conv.detached.map((d) => [d.name, d.launch])).toEqual([["acomp", { child: "acomp", callId: null, at: { seq: 3, row: 3 }, anchor: true }]]);
    expect(conv.messages).toEqual([
      { type: "steering", op: null, stream: "main", turn: 0, at: { seq: 3, row: 0 } },
      { type: "queued", op: "enqueue", stream: "main", turn: 0, at: { seq: 3, row: 1 } },
    ]);
    expect(conv.compactions).toEqual([{ stream: "main", turn: 0, at: { seq: 3, row: 4 } }]);
    expect(conv.main.turns[0]?.compactions).toHaveLength(1);
    // the duplicate copy (3,9) is never cited
    expect(conv.main.turns.flatMap((t) => t.records).some((x) => x.seq === 3 && x.row === 9)).toBe(false);
    expect(conv.calls.every((c) => c.result !== null)).toBe(true);
  });

  it("a call answered in a later round is paired across rounds, and the child launched later is nested", () => {
    const { rounds, conv } = chainAt(index, [1, 2, 3]);
    expect(rounds.map((r) => r.range)).toEqual([{ from: 1, to: 1 }, { from: 2, to: 2 }, { from: 3, to: 3 }, { from: 4, to: 4 }]);
    expect(rounds[0]?.calls).toEqual([{ id: "t1", stream: "main", turn: 0, call: [1, 2], result: null, fragments: [[1, 3]] }]);
    expect(rounds[2]?.calls[0]).toEqual({ id: "t1", stream: "main", turn: 0, call: [1, 2], result: [3, 2], fragments: [] });
    expect(shape(conv)).toEqual(shape(chainAt(index, []).conv));
  });

  it("returns null when the index holds nothing past the head, and never reads past indexedSeq", () => {
    const { rounds } = chainAt(index, []);
    expect(buildRound("s1", rounds, index)).toBeNull();
    const body = buildRound("s1", [], { ...index, indexedSeq: 2 });
    expect(body?.range).toEqual({ from: 1, to: 2 });
    expect(body?.turns.flatMap((t) => t.records).every(([seq]) => seq <= 2)).toBe(true);
  });

  it("publishes tombstones for cited files the index no longer holds", () => {
    const { rounds } = chainAt(index, []);
    const without2: SessionIndex = { indexedSeq: 4, files: index.files.filter((f) => f.seq !== 2), entries: index.entries.filter((e) => e.seq !== 2) };
    const body = buildRound("s1", rounds, without2);
    expect(body?.tombstones).toEqual([{ seq: 2, rows: 4 }]);
    expect(body?.range).toEqual({ from: 5, to: 4 });
    expect(body?.files).toEqual([]);
    const conv = foldRounds("s1", [...rounds, encodeRound(body as NonNullable<typeof body>).round]);
    expect(conv.tombstones).toEqual([{ seq: 2, rows: 4, round: 2 }]);
    expect(conv.files.find((f) => f.seq === 2)?.gone).toBe(true);
    expect(buildRound("s1", [...rounds, encodeRound(body as NonNullable<typeof body>).round], without2)).toBeNull();
  });

  it("rejects an index entry outside its file", () => {
    const bad: SessionIndex = { ...index, entries: [...index.entries, { seq: 1, row: 99, stream: "main", kind: "user", duplicate: false }] };
    try {
      buildRound("s1", [], bad);
      expect.unreachable();
    } catch (e) {
      expect(isChainError(e) && e.code).toBe("InvalidInput");
    }
  });

  it("the main stream is @lake/events' MAIN_STREAM", () => {
    expect(foldRounds("s1", []).main.name).toBe(MAIN_STREAM);
    expect(chainAt(index, []).conv.streams[MAIN_STREAM]?.turns.length).toBe(2);
  });

  it("fold refuses a round that does not follow the one before it", () => {
    const { rounds } = chainAt(index, [2]);
    expect(() => foldRounds("s1", [rounds[1] as Round])).toThrow(/round 2 where round 1 was expected/);
    expect(() => foldRounds("other", rounds)).toThrow(/belongs to conversation/);
  });

  // Property: however the landed range is split into rounds, the fold describes the same conversation.
  // 150 random sessions (~20 files of up to 6 records each), default run well under a second.
  it("property: the fold does not depend on where rounds were cut", () => {
    const streams = ["main", "main", "main", "k1", "k2"];
    const kinds = ["user", "assistant", "tool_call", "tool_result", "meta", "system"];
    const recArb = fc.record({
      kind: fc.constantFrom(...kinds),
      id: fc.option(fc.constantFrom("i1", "i2", "i3", "i4", "i5", "i6"), { nil: undefined }),
      parent: fc.option(fc.constantFrom("i1", "i2", "i3", "i4", "i5", "i6"), { nil: undefined }),
      call: fc.option(fc.constantFrom("c1", "c2", "c3", "c4"), { nil: undefined }),
      child: fc.option(fc.constantFrom("k1", "k2"), { freq: 8, nil: undefined }),
      vt: fc.option(fc.constantFrom("queue-operation/enqueue", "system/compact_boundary"), { freq: 10, nil: undefined }),
      dup: fc.boolean(),
    });
    const fileArb = fc.record({ stream: fc.constantFrom(...streams), records: fc.array(recArb, { minLength: 1, maxLength: 6 }) });
    fc.assert(
      fc.property(fc.array(fileArb, { minLength: 1, maxLength: 20 }), fc.array(fc.nat(), { maxLength: 5 }), (files, rawCuts) => {
        const specs: FileSpec[] = files.map((f) => ({ stream: f.stream, records: f.records.map((r) => clean(r)) }));
        const idx = indexOf(specs);
        const cuts = [...new Set(rawCuts.map((c) => (c % idx.indexedSeq) + 1))].sort((a, b) => a - b);
        expect(shape(chainAt(idx, cuts).conv)).toEqual(shape(chainAt(idx, []).conv));
      }),
      { numRuns: 150 },
    );
  });
});

describe("a read by range", () => {
  // The round built from the entries past the chain's reach (the ones before searched, not held) is the round the
  // whole index gives, byte for byte: turns, calls across rounds, and anchors whose link or record lies before.
  it("property: gives the round the whole index gives, at every cut", () => {
    const streams = ["main", "main", "k1", "k2", "k3"];
    const ids = ["i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8"];
    // Children mostly unlaunched, their records linking to ids that land anywhere, before or after them: anchors
    // whose first link and whose record each lie before the range or in it.
    const sometimes = <T>(arb: fc.Arbitrary<T>, inTen: number): fc.Arbitrary<T | undefined> =>
      fc.oneof({ weight: 10 - inTen, arbitrary: fc.constant(undefined) }, { weight: inTen, arbitrary: arb });
    const recArb = fc.record({
      kind: fc.constantFrom("user", "assistant", "tool_call", "tool_result", "meta"),
      id: sometimes(fc.constantFrom(...ids), 7),
      parent: sometimes(fc.constantFrom(...ids), 5),
      call: sometimes(fc.constantFrom("c1", "c2", "c3"), 5),
      child: sometimes(fc.constantFrom("k1", "k2", "k3"), 1),
      vt: sometimes(fc.constantFrom("queue-operation/enqueue", "system/compact_boundary"), 1),
      dup: fc.nat(9).map((n) => n === 0),
    });
    const fileArb = fc.record({ stream: fc.constantFrom(...streams), records: fc.array(recArb, { minLength: 1, maxLength: 4 }) });
    let anchors = 0;
    const scanned = { entries: 0, found: 0 };
    fc.assert(
      fc.property(fc.array(fileArb, { minLength: 1, maxLength: 16 }), fc.array(fc.nat(), { maxLength: 6 }), (files, rawCuts) => {
        const idx = indexOf(files.map((f) => ({ stream: f.stream, records: f.records.map((r) => clean(r)) })));
        const cuts = [...new Set(rawCuts.map((c) => (c % idx.indexedSeq) + 1))].sort((a, b) => a - b);
        const rounds: Round[] = [];
        for (const cut of [...cuts, idx.indexedSeq]) {
          const whole = cutIndex(idx, cut);
          const from = (rounds.at(-1)?.range.to ?? 0) + 1;
          const body = buildRound("s1", rounds, whole);
          expect(buildRound("s1", rounds, rangeIndex(whole, from, scanned))).toEqual(body);
          if (body) {
            anchors += body.launches.filter((l) => l.anchor).length;
            rounds.push(encodeRound(body).round);
          }
        }
      }),
      { numRuns: 400 },
    );
    // The runs did reach back: anchors were made, and links and records were found by the lookup.
    expect(anchors).toBeGreaterThan(100);
    expect(scanned.found).toBeGreaterThan(100);
  });

  it("holds only the entries past the head, and searches the index only for a child still waiting for its launch", () => {
    const main = (n: number, from: number): Rec[] => Array.from({ length: n }, (_, i) => ({ kind: i % 2 ? "assistant" : "user", id: `m${from + i}`, parent: `m${from + i - 1}` }));
    const files: FileSpec[] = [{ stream: "main", records: main(50, 0) }, { stream: "main", records: main(50, 50) }, { stream: "main", records: main(50, 100) }];
    const idx = indexOf(files);
    const r1 = encodeRound(buildRound("s1", [], cutIndex(idx, 2)) as NonNullable<ReturnType<typeof buildRound>>).round;
    const scanned = { entries: 0, found: 0 };
    const ranged = rangeIndex(idx, 3, scanned);
    expect(ranged.entries).toHaveLength(50);
    expect(buildRound("s1", [r1], ranged)).toEqual(buildRound("s1", [r1], idx));
    expect(scanned.entries).toBe(0); // main alone: no child waits, nothing is searched
    // A child whose first link points into main's first file, before the range: searched, and anchored there.
    const withChild = indexOf([...files, { stream: "agent-x", records: [{ kind: "user", id: "x1", parent: "m10" }] }]);
    const r2 = encodeRound(buildRound("s1", [r1], cutIndex(withChild, 3)) as NonNullable<ReturnType<typeof buildRound>>).round;
    const body = buildRound("s1", [r1, r2], rangeIndex(withChild, 4, scanned));
    expect(body?.launches).toEqual([{ child: "agent-x", call: null, at: [1, 10], anchor: true }]);
    expect(body).toEqual(buildRound("s1", [r1, r2], withChild));
    expect(scanned.entries).toBeGreaterThan(0);
  });
});

function clean(r: { kind: string; id: string | undefined; parent: string | undefined; call: string | undefined; child: string | undefined; vt: string | undefined; dup: boolean }): Rec {
  const out: Rec = { kind: r.kind, dup: r.dup };
  if (r.id !== undefined) out.id = r.id;
  if (r.parent !== undefined) out.parent = r.parent;
  if (r.call !== undefined) out.call = r.call;
  if (r.child !== undefined) out.child = r.child;
  if (r.vt !== undefined) out.vt = r.vt;
  return out;
}
