// The V8 flags a collect pass that lands sets for its heap, and putting them back.
import { setFlagsFromString } from "node:v8";

/**
 * A pass that lands something allocates as it goes, windows and records that die young: V8's young
 * generation is kept at its first size instead of growing to 32 MB (its garbage no longer adds to
 * the peak RSS of a long session's pass; a 100 MB first collect's time is within 1 %). V8's flags
 * are the process's: the convert workers, started after, grow theirs alike.
 */
let youngKept = false;
export function keepYoungGenerationSmall(): void {
  if (youngKept) return;
  youngKept = true;
  setFlagsFromString("--semi-space-growth-factor=1");
}

/**
 * Once a pass has convert workers, their heaps sit beside the main thread's in the peak RSS, and
 * the main thread (landing, indexing, publishing) has time to spare while they convert: its old
 * generation is let grow by 30 % over what lives after each full GC instead of V8's up to 4× (a
 * 700 MB session's pass: about 230 instead of 300 MB, in the same time). Without workers the
 * main thread is the pass's one core, and the extra GCs would cost it some 15 %.
 */
let oldKept = false;
export function keepOldGenerationNearLive(): void {
  if (oldKept) return;
  oldKept = true;
  setFlagsFromString("--heap-growing-percent=30");
}

/**
 * Put the flags a pass set back to V8's own values (those of Node 20's V8; `node --v8-options`), as a
 * one-shot collect ends: the code cache its run leaves (bin/compile-cache.js, which writes none
 * while V8's flags differ from those its first uncached chunk was compiled with) is then one the next start takes, so
 * a collect that lands compiles the session pass's chunks from it too. A process started with
 * either flag set otherwise writes none, as before.
 */
export function restoreHeapFlags(): void {
  if (youngKept) setFlagsFromString("--semi-space-growth-factor=2");
  if (oldKept) setFlagsFromString("--heap-growing-percent=0");
  youngKept = false;
  oldKept = false;
}
