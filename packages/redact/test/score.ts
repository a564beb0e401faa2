// Precision and recall of a redactor on the labelled corpus.
import type { Redactor } from "../src/index.js";
import type { CorpusItem } from "./corpus.js";

export interface Counts {
  /** Findings that overlap a labelled secret of the same rule. */
  tp: number;
  /** Findings that overlap no labelled secret of their rule. */
  fp: number;
  /** Labelled secrets found and fully covered by a finding of their rule. */
  found: number;
  /** Labelled secrets. */
  labels: number;
}

export interface Score {
  readonly perRule: Map<string, Counts>;
  readonly overall: Counts;
  /** Items with a miss or a false positive (for diagnosis). */
  readonly errors: { id: string; kind: "miss" | "false-positive"; rule: string; excerpt: string }[];
}

export const precision = (c: Counts) => (c.tp + c.fp === 0 ? 1 : c.tp / (c.tp + c.fp));
export const recall = (c: Counts) => (c.labels === 0 ? 1 : c.found / c.labels);

export function score(redactor: Redactor, items: readonly CorpusItem[]): Score {
  const perRule = new Map<string, Counts>();
  const get = (rule: string) => {
    let c = perRule.get(rule);
    if (!c) perRule.set(rule, (c = { tp: 0, fp: 0, found: 0, labels: 0 }));
    return c;
  };
  for (const r of redactor.rules) get(r.id);
  const errors: Score["errors"] = [];
  for (const item of items) {
    const { findings } = redactor.redactString(item.text);
    for (const l of item.labels) {
      const c = get(l.rule);
      c.labels++;
      if (findings.some((f) => f.rule === l.rule && f.start <= l.start && f.end >= l.end)) c.found++;
      else errors.push({ id: item.id, kind: "miss", rule: l.rule, excerpt: item.text.slice(Math.max(0, l.start - 40), l.end + 20) });
    }
    for (const f of findings) {
      const c = get(f.rule);
      if (item.labels.some((l) => l.rule === f.rule && f.start < l.end && l.start < f.end)) c.tp++;
      else {
        c.fp++;
        errors.push({ id: item.id, kind: "false-positive", rule: f.rule, excerpt: item.text.slice(Math.max(0, f.start - 40), f.end + 20) });
      }
    }
  }
  const overall: Counts = { tp: 0, fp: 0, found: 0, labels: 0 };
  for (const c of perRule.values()) {
    overall.tp += c.tp;
    overall.fp += c.fp;
    overall.found += c.found;
    overall.labels += c.labels;
  }
  return { perRule, overall, errors };
}
