// The framing of @lake/wal files (the hook spool, broca WALs) for the store's append cursor:
// windows end at frame boundaries, a torn tail waits, lineage frames carry no record, and a frame
// that is corrupt or needs a feature this build does not know refuses the whole source.
import { FRAME_HEADER_BYTES, MAX_PAYLOAD_BYTES, VER_GATED, VER_LINEAGE, VER_RECORD, frameDigest, isKnownFeature } from "@lake/wal";
import type { Framing, SourceLine } from "@lake/store";

function frameLength(buf: Buffer, pos: number): number {
  const len = buf.readUInt32LE(pos);
  // An impossible length is corruption: the header alone is handed to split, which refuses it.
  return len > MAX_PAYLOAD_BYTES ? FRAME_HEADER_BYTES : FRAME_HEADER_BYTES + len;
}

/** The framing of a @lake/wal file. Each record frame becomes one line: its payload, and its JSON value (a gated frame's inner record). */
export const walFraming: Framing = {
  complete(buf) {
    let pos = 0;
    while (pos + FRAME_HEADER_BYTES <= buf.length) {
      const total = frameLength(buf, pos);
      if (pos + total > buf.length) break;
      pos += total;
    }
    return pos;
  },
  unitLength(head) {
    return head.length >= 4 ? frameLength(head, 0) : undefined;
  },
  split(buf, offset) {
    const lines: SourceLine[] = [];
    const invalid: boolean[] = [];
    let pos = 0;
    while (pos < buf.length) {
      const at = offset + pos;
      const len = buf.readUInt32LE(pos);
      if (len > MAX_PAYLOAD_BYTES) return { lines, invalid, refuse: `corrupt WAL frame at byte ${at}: payload length ${len} is over 64 MiB` };
      const ver = buf.readUInt8(pos + 4);
      const seq = buf.readBigUInt64LE(pos + 5);
      const fence = buf.readBigUInt64LE(pos + 13);
      const digest = buf.subarray(pos + 21, pos + 53);
      const payload = buf.subarray(pos + 53, pos + 53 + len);
      pos += FRAME_HEADER_BYTES + len;
      if (!frameDigest(ver, seq, fence, payload).equals(digest)) return { lines, invalid, refuse: `corrupt WAL frame at byte ${at}: digest mismatch` };
      if (ver === VER_LINEAGE) {
        if (len !== 16 || seq !== 0n || fence !== 0n) return { lines, invalid, refuse: `corrupt WAL frame at byte ${at}: malformed lineage frame` };
        continue;
      }
      if (ver !== VER_RECORD && ver !== VER_GATED) return { lines, invalid, refuse: `corrupt WAL frame at byte ${at}: unknown frame version ${ver}` };
      const text = payload.toString("utf8");
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return { lines, invalid, refuse: `corrupt WAL frame at byte ${at}: payload is not JSON` };
      }
      if (ver === VER_GATED) {
        const g = value as { requires?: unknown; record?: unknown };
        const requires = Array.isArray(g?.requires) ? (g.requires as unknown[]).map(String) : [];
        const unknown = requires.filter((f) => !isKnownFeature(f));
        if (unknown.length > 0) return { lines, invalid, refuse: `WAL written by a newer writer: frame at byte ${at} requires ${unknown.join(", ")}` };
        value = g.record;
      }
      lines.push({ bytes: payload, text, value, offset: at, line: Number(seq) });
      invalid.push(false);
    }
    return { lines, invalid };
  },
};
