// Regenerates the golden vectors: `npx tsx test/vectors/make-vectors.ts`. Run only on a deliberate format change.
import { writeFileSync } from "node:fs";
import { buildRound, encodeRound } from "@lake/chain";
import { ChainState } from "../../src/internal/conversation.js";
import { encodeFold } from "../../src/internal/fold-cache.js";
import { indexOf, sampleFiles } from "../support/landed.js";

const dir = new URL(".", import.meta.url);
const r1 = encodeRound(buildRound("s1", [], indexOf(sampleFiles().slice(0, 2))) as NonNullable<ReturnType<typeof buildRound>>);
const r2 = encodeRound(buildRound("s1", [r1.round], indexOf(sampleFiles())) as NonNullable<ReturnType<typeof buildRound>>);
for (const r of [r1, r2]) writeFileSync(new URL(r.fileName, dir), r.bytes);
writeFileSync(new URL("vectors.json", dir), `${JSON.stringify({ rounds: [r1, r2].map((r) => ({ file: r.fileName, commit: r.commit, bytes: r.bytes.length })) }, null, 2)}\n`);
// conversation.fold of the lean fold of both rounds, for the conversation.state text README "Publish protocol" shows.
const fold = new ChainState("s1", true);
for (const r of [r1, r2]) fold.apply(r.round, `rounds/${r.fileName}`);
writeFileSync(new URL("conversation.fold", dir), encodeFold(fold, `schema 1\nround 2\ncommit ${r2.commit}\nfile ${r2.fileName}\nthrough_seq ${r2.round.range.to}\n`));
console.log(r1.fileName, r2.fileName);
