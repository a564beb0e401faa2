import { randomBytes } from "node:crypto";
import { defineCommand, text } from "@lake/cli";
import { initFleet } from "@lake/layout";
import { EXIT, MaintError } from "../errors.js";
import { COMMON, emit, withStore } from "./shared.js";

/** `lake-maint init`: write fleet.json once. */
export const initCommand = defineCommand({
  summary: "write fleet.json once (a second init refuses)",
  description: "  Write fleet.json {fleet_id, created_at, schema_version: 1} by create-if-absent.\n  Exit 4 when fleet.json already exists (it is left untouched).",
  options: { "fleet-id": text("ID", "the fleet id (default fleet-<12 hex digits>)"), ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      const id = v["fleet-id"] ?? `fleet-${randomBytes(6).toString("hex")}`;
      const r = await initFleet(store, id);
      if (!r.created) throw new MaintError("Refused", `fleet.json: already exists in ${store.url} (fleet_id ${r.manifest.fleet_id}); not replaced`, { data: { key: "fleet.json", store: store.url } });
      emit(io, v.json, r.manifest, () => [`initialised ${store.url}: fleet_id ${r.manifest.fleet_id}`]);
      return EXIT.ok;
    }),
});
