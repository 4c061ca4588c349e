/** Reads the events' signing secret at start-up: one clear line when it cannot be used. */
import type { WebhookConfig } from "../config/config.ts";
import { refuseOpenFile } from "../private_files.ts";
import type { WebhookTarget } from "./event_outbox.ts";
import { importWebhookSecret } from "./webhook_signature.ts";
import { StartupError } from "../startup_error.ts";
import { runtime } from "../runtime/current.ts";

export class WebhookTargetError extends StartupError {
  override name = "WebhookTargetError";
}

/** The endpoint and its key, or null without VESTIBULE_WEBHOOK_URL. */
export async function loadWebhookTarget(
  config: WebhookConfig | null,
): Promise<WebhookTarget | null> {
  if (config === null) return null;
  const setting = `VESTIBULE_WEBHOOK_SECRET_FILE=${JSON.stringify(config.secretFile)}`;
  try {
    // Whoever can read the secret can forge events: owner-only, like the store.
    await refuseOpenFile(config.secretFile);
    const key = await importWebhookSecret(await runtime.readTextFile(config.secretFile));
    return { url: config.url, key };
  } catch (error) {
    throw new WebhookTargetError(`${setting}: ${(error as Error).message}`);
  }
}
