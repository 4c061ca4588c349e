// The Chromium every browser test drives (Debian's, through playwright-core), and where their
// screenshots go (tests/screenshots/, not committed).
export const CHROMIUM = "/usr/bin/chromium";
export const SHOTS = new URL("../screenshots/", import.meta.url).pathname;

/** Whether Chromium is installed; when it is not, says that `test` is skipped. */
export function chromiumAvailable(test: string): boolean {
  try {
    Deno.statSync(CHROMIUM);
    return true;
  } catch {
    console.warn(`skipping ${test}: ${CHROMIUM} is not installed (.ci/run installs it)`);
    return false;
  }
}
