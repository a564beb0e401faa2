/**
 * An exact set of byte strings kept outside the JS heap: the index's dedupe keys (the record ids a
 * stream already holds). The keys' bytes go into one growing buffer and an open-addressing table of
 * their numbers finds them; equal bytes, equal key (no fingerprint can make two ids one). About 54
 * bytes per key of a 36-character id, where a `Set` of strings takes some 90 on the heap.
 */
export class ByteSet {
  private arena = Buffer.allocUnsafe(1 << 12);
  private used = 0;
  /** Where key i starts in the arena (key i ends where key i + 1 starts, the last at `used`). */
  private starts = new Uint32Array(64);
  /** Key i's hash: a probe compares bytes only when the hashes are equal, and a growing table hashes no key again. */
  private hashes = new Uint32Array(64);
  private count = 0;
  /** Slots: key number + 1, 0 when empty; a power of two, at most half full. */
  private table = new Int32Array(128);

  /** Keys held. */
  get size(): number {
    return this.count;
  }

  /** Bytes this set holds outside the heap (arena, starts, hashes and table). */
  get bytes(): number {
    return this.arena.length + this.starts.byteLength + this.hashes.byteLength + this.table.byteLength;
  }

  /** True when `key[start, end)` is in the set. */
  has(key: Uint8Array, start = 0, end = key.length): boolean {
    return this.table[this.find(key, start, end, hash(key, start, end))]! !== 0;
  }

  /** Add `key[start, end)`; false when it was there already. */
  add(key: Uint8Array, start = 0, end = key.length): boolean {
    const h = hash(key, start, end);
    const slot = this.find(key, start, end, h);
    if (this.table[slot] !== 0) return false;
    const len = end - start;
    if (this.used + len > this.arena.length) {
      const next = Buffer.allocUnsafe(Math.max(this.used + len, this.arena.length * 2));
      this.arena.copy(next, 0, 0, this.used);
      this.arena = next;
    }
    if (this.count + 1 >= this.starts.length) {
      const next = new Uint32Array(this.starts.length * 2);
      next.set(this.starts);
      this.starts = next;
      const hashes = new Uint32Array(this.starts.length);
      hashes.set(this.hashes);
      this.hashes = hashes;
    }
    // A short key (an id) byte by byte: no view of it is made per key.
    if (len <= 64) for (let i = 0; i < len; i++) this.arena[this.used + i] = key[start + i]!;
    else this.arena.set(key.subarray(start, end), this.used);
    this.hashes[this.count] = h;
    this.starts[this.count] = this.used;
    this.used += len;
    this.count++;
    this.starts[this.count] = this.used;
    this.table[slot] = this.count;
    if (this.count * 2 > this.table.length) this.grow();
    return true;
  }

  private find(key: Uint8Array, start: number, end: number, h: number): number {
    const mask = this.table.length - 1;
    const len = end - start;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const k = this.table[slot]!;
      if (k === 0) return slot;
      if (this.hashes[k - 1] !== h) continue;
      const a = this.starts[k - 1]!;
      const b = this.starts[k]!;
      if (b - a === len && this.arena.compare(key, start, end, a, b) === 0) return slot;
    }
  }

  private grow(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let k = 1; k <= this.count; k++) {
      let slot = this.hashes[k - 1]! & mask;
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = k;
    }
    this.table = table;
  }
}

/** FNV-1a over `b[start, end)`. */
function hash(b: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}
