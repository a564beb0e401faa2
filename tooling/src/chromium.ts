// The Chromium of the browser tests: tooling/scripts/chromium-find.sh's answer ($LAKE_TEST_CHROMIUM,
// else `chromium` on PATH, installed from Debian's packages when missing and run as root). A test
// file asks once and launches one browser for all its tests.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../scripts/chromium-find.sh", import.meta.url));

/** The path of the Chromium binary to give playwright-core as `executablePath`; throws with the reason when there is none. */
export function chromiumPath(): string {
  try {
    return execFileSync("bash", [SCRIPT], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 }).trim();
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(String(err.stderr ?? err.message).trim().split("\n").slice(-1)[0] || "chromium-find.sh failed");
  }
}
