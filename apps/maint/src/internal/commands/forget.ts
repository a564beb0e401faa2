import { defineCommand, flag, seconds } from "@lake/cli";
import { requireFleet } from "../context.js";
import { EXIT } from "../errors.js";
import { COMMON, DEFAULT_GC_GRACE_SECONDS, ctxOf, emit, withStore } from "./shared.js";

/** `lake-maint forget SESSION`: remove a session from the fleet (preview unless --apply). */
export const forgetCommand = defineCommand({
  summary: "remove a session from the fleet (preview; --apply)",
  positionals: { names: "SESSION", min: 1, max: 1 },
  description: `  Remove a session from the fleet. Without --apply, lists what would go. With --apply, in this order: the
  tombstone tombstones/SESSION.json (a collector's push of the session is refused from then on); every
  bronze object of session=SESSION and session=SESSION.N (segments, _SEALED, digest.json) and its quarantine
  objects; every compacted partition whose _COMPACTED cites it compacted again without it (a partition left
  empty loses its marker), then the old generations (parts, usage rollups) gc'd once older than --grace;
  claims citing it deleted and the snapshot published again, older blobs deleted after --grace. Prints every
  key removed. Run it again to finish a stopped run.`,
  options: {
    apply: flag("remove (without it: list what would go)"),
    grace: seconds(`how old an old generation or snapshot blob must be to be deleted (default ${DEFAULT_GC_GRACE_SECONDS} s)`, { default: DEFAULT_GC_GRACE_SECONDS }),
    ...COMMON,
  },
  run: ({ values: v, positionals, io }) =>
    withStore(v, io, async (store) => {
      const id = positionals[0]!;
      await requireFleet(store);
      const { runForget } = await import("../forget.js");
      const r = await runForget(ctxOf(store, v, io), id, { apply: v.apply, graceSeconds: v.grace });
      emit(io, v.json, r, () => {
        const verb = r.apply ? "deleted" : "would delete";
        return [
          ...(r.apply ? [`${r.tombstone.written ? "wrote" : "kept"} ${r.tombstone.key}`] : [`would write ${r.tombstone.key}`]),
          ...r.deleted.map((k) => `${verb} ${k}`),
          ...r.recompacted.map((c) => `recompacted dt=${c.dt}/fleet=${c.fleet}: ${c.status}${c.gen ? ` gen=${c.gen}` : ""}`),
          ...r.markers_deleted.map((k) => `deleted ${k} (no session left)`),
          ...r.gc.flatMap((g) => [...g.deleted.map((k) => `deleted ${k}`), ...g.kept.map((k) => `kept ${k} (younger than --grace; run forget or gc again after it)`)]),
          ...r.claims.map((k) => `${verb} ${k}`),
          ...(r.snapshot ? [...r.snapshot.old_blobs_deleted.map((k) => `deleted ${k}`), ...r.snapshot.old_blobs_kept.map((k) => `kept ${k} (younger than --grace)`)] : []),
          `${r.session}: ${r.apply ? "forgotten in" : "preview for"} ${store.url}${r.apply ? "" : " (nothing changed; --apply removes)"}`,
        ];
      });
      return EXIT.ok;
    }),
});
