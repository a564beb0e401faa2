// Keyword prefilter: one Aho–Corasick pass over a string decides which rules' regexes run.
// Keywords are ASCII and matched case-insensitively; the automaton is a dense DFA over the 128
// ASCII code units (non-ASCII code units send it back to the root, as no keyword contains one).

const ALPHABET = 128;

/** A compiled multi-keyword matcher that reports which rule indexes had a keyword in a text. */
export class KeywordMatcher {
  private readonly delta: Int32Array;
  /** Rule indexes reported when the automaton is in a state (own keyword + fail-chain keywords). */
  private readonly out: (readonly number[] | undefined)[];
  readonly ruleCount: number;

  constructor(keywordsByRule: readonly (readonly string[])[]) {
    this.ruleCount = keywordsByRule.length;
    const gotoTable: Map<number, number>[] = [new Map()];
    const outSets: Set<number>[] = [new Set()];
    keywordsByRule.forEach((keywords, rule) => {
      for (const raw of keywords) {
        const kw = raw.toLowerCase();
        let s = 0;
        for (let i = 0; i < kw.length; i++) {
          const c = kw.charCodeAt(i);
          if (c >= ALPHABET) throw new Error(`keyword ${JSON.stringify(raw)} is not ASCII`);
          let next = gotoTable[s]!.get(c);
          if (next === undefined) {
            next = gotoTable.length;
            gotoTable.push(new Map());
            outSets.push(new Set());
            gotoTable[s]!.set(c, next);
          }
          s = next;
        }
        outSets[s]!.add(rule);
      }
    });
    const n = gotoTable.length;
    const delta = new Int32Array(n * ALPHABET);
    const fail = new Int32Array(n);
    // Whether a state reports rules (its own keyword or one along its fail chain): known for a state
    // as soon as it is found, as its fail state is shallower and was found before it.
    const reports = new Uint8Array(n);
    reports[0] = outSets[0]!.size ? 1 : 0;
    // Each entry holds its target's row offset (state × 128), bitwise-negated when the target reports
    // rules: the scan loop then takes one load and one sign test per code unit. Entries are written
    // in that form as the table is built (a row copy copies them as they are): a pass over the whole
    // table afterwards cost most of the default rules' build at start-up.
    const entry = (t: number) => (reports[t] ? ~(t * ALPHABET) : t * ALPHABET);
    const target = (e: number) => (e < 0 ? ~e : e) / ALPHABET;
    // Case folding: an upper-case letter moves like its lower-case letter. Keywords are lower-cased,
    // so no transition is on an upper-case letter: a row's columns A–Z are a copy of its a–z.
    const fold = (row: number) => delta.copyWithin(row + 65, row + 97, row + 123);
    // Breadth-first: a state's fail link and row are known before its children's.
    // A state's row starts as a copy of its fail state's row (complete, as that state is shallower);
    // its own transitions then overwrite their columns. (Row copies, not 128 lookups per state:
    // building the default rules' automaton at start-up is ~10x cheaper this way.)
    const queue: number[] = [];
    if (reports[0]) delta.fill(entry(0), 0, ALPHABET);
    for (const [c, t] of gotoTable[0]!) {
      fail[t] = 0;
      reports[t] = outSets[t]!.size || reports[0] ? 1 : 0;
      delta[c] = entry(t);
      queue.push(t);
    }
    fold(0);
    for (let qi = 0; qi < queue.length; qi++) {
      const s = queue[qi]!;
      const f = fail[s]!;
      if (outSets[f]!.size) for (const r of outSets[f]!) outSets[s]!.add(r);
      const row = s * ALPHABET;
      delta.copyWithin(row, f * ALPHABET, f * ALPHABET + ALPHABET);
      for (const [c, t] of gotoTable[s]!) {
        const ft = target(delta[f * ALPHABET + c]!);
        fail[t] = ft;
        reports[t] = outSets[t]!.size || reports[ft] ? 1 : 0;
        delta[row + c] = entry(t);
        queue.push(t);
      }
      fold(row);
    }
    this.delta = delta;
    this.out = outSets.map((set) => (set.size ? [...set].sort((a, b) => a - b) : undefined));
  }

  /**
   * Mark in `hits` (one byte per rule) every rule with a keyword in `text`; returns how many
   * rules were newly marked.
   */
  scan(text: string, hits: Uint8Array): number {
    const delta = this.delta;
    const out = this.out;
    let marked = 0;
    let row = 0;
    for (let i = 0, n = text.length; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= ALPHABET) {
        row = 0;
        continue;
      }
      row = delta[row | c]!;
      if (row < 0) {
        row = ~row;
        const o = out[row >> 7]!;
        for (let k = 0; k < o.length; k++) {
          const r = o[k]!;
          if (hits[r] === 0) {
            hits[r] = 1;
            marked++;
          }
        }
      }
    }
    return marked;
  }
}
