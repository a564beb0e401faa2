// `@lake/cli/testing`: what the apps' tests share about their help and README texts.
import { fileURLToPath } from "node:url";
import { defaultStoreUrl, legacyDefaultStorePath } from "@lake/layout/defaults";

/**
 * The default fleet store and the old default it is moved from, as the apps' help and READMEs
 * write them (`~/…`): resolved by @lake/layout for a home directory with no LAKE_* variable and no
 * config file, so a doc that names another place disagrees with the code.
 */
export function documentedStorePlaces(): { readonly store: string; readonly legacy: string } {
  const home = "/nonexistent-home/u";
  const tilde = (p: string) => (p.startsWith(home + "/") ? "~" + p.slice(home.length) : p);
  return { store: tilde(fileURLToPath(defaultStoreUrl({}, home))), legacy: tilde(legacyDefaultStorePath({}, home)) };
}
