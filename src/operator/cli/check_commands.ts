// Admin commands: the doctor and the mail test.
import * as v from "valibot";
import { EmailSchema } from "../../accounts/schemas.ts";
import { sendTestMail } from "../../mail/test_message.ts";
import { formatFinding, liveChecks, offlineChecks, upstreamChecks } from "./doctor.ts";

import { AdminError, command, type Runnable } from "./command.ts";
import { countOf } from "../../count_words.ts";

export const CHECK_COMMANDS: Readonly<Record<string, Runnable>> = {
  check: command({
    usage: "check [--live]",
    summary:
      "Check the configuration, store, mail transport and upstreams file (and with --live each upstream, reached as the gateway reaches it, and the public URLs, as an agent fetches them): one line per finding, exit 1 on a fault.",
    switches: ["live"],
    options: v.strictObject({ live: v.optional(v.literal("on", "takes no value")) }),
    async run({ live }, deps) {
      const findings = await offlineChecks({
        config: deps.config,
        env: deps.env ?? {},
        store: deps.store,
        ...(deps.staticDir ? { staticDir: deps.staticDir } : {}),
      });
      findings.push(
        ...await upstreamChecks(
          deps.config.upstreamsFile,
          live !== undefined,
          undefined,
          deps.config.upstreamKeyFile,
        ),
      );
      if (live) findings.push(...await liveChecks(deps.config, fetch));
      for (const finding of findings) deps.out(formatFinding(finding));
      const faults = findings.filter((f) => f.level === "fault").length;
      if (faults > 0) throw new AdminError(countOf(faults, "fault"));
      return undefined;
    },
  }),
  "mail-test": command({
    usage: "mail-test --to EMAIL",
    summary: "Send a test message through VESTIBULE_MAIL now and report the server's answer.",
    options: v.strictObject({ to: EmailSchema }),
    async run({ to }, { config, err }) {
      const result = await sendTestMail(config, to, err, err);
      if (!result.sent) throw new AdminError(`not sent via ${result.transport}: ${result.error}`);
      return result;
    },
  }),
};
