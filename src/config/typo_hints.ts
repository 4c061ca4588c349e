// Names an operator may mistype, and the setting each most likely meant.
import { SETTINGS } from "./settings.ts";

/** Names an operator may guess that no setting has, each with the setting that does its job. */
export const LIKELY_TYPOS: Readonly<Record<string, string>> = {
  VESTIBULE_PORT: SETTINGS.listen.env,
  VESTIBULE_HOST: SETTINGS.listen.env,
  VESTIBULE_URL: SETTINGS.baseUrl.env,
  VESTIBULE_DATA_DIR: SETTINGS.dataPath.env,
  VESTIBULE_UPSTREAMS_FILE: SETTINGS.upstreamsFile.env,
};

/** `VESTIBULE_BASE_URL` -> `VESTIBULE_BASEURL`. */
export function withoutInnerUnderscores(env: string): string {
  return "VESTIBULE_" + env.slice("VESTIBULE_".length).replaceAll("_", "");
}
