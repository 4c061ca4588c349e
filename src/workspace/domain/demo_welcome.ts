// What `--demo` tells the person who started it: who to sign in as, where, and where the sign-in
// link will appear. Plain lines for a human, written by main.ts to stderr (see there why).
import type { Config } from "../../config/config.ts";
import { describeMailTransport } from "../../mail/transport.ts";
import { DEMO_BUSINESS_NAME, DEMO_MEMBER_EMAIL, DEMO_OWNER_EMAIL } from "./demo.ts";

export function demoWelcome(config: Pick<Config, "authUrl" | "mail">): string[] {
  return [
    `Demo: "${DEMO_BUSINESS_NAME}" is owned by ${DEMO_OWNER_EMAIL} ` +
    `(${DEMO_MEMBER_EMAIL} is a member).`,
    `Sign in as ${DEMO_OWNER_EMAIL} at ${config.authUrl}/sign-in`,
    _whereLinksAppear(config.mail),
  ];
}

function _whereLinksAppear(mail: Config["mail"]): string {
  switch (mail.kind) {
    case "log":
      return "The sign-in link appears here, on stderr (VESTIBULE_MAIL=log).";
    case "file":
      return `The sign-in link is appended to ${mail.path}, one JSON object a line, as its ` +
        `"link" (VESTIBULE_MAIL=file:${mail.path}).`;
    case "smtp":
      // example.com is reserved (RFC 2606): only a server that keeps every message shows it.
      return `The sign-in link is mailed to ${DEMO_OWNER_EMAIL} through ` +
        `${describeMailTransport(mail)}; example.com takes no mail, so read it where that server ` +
        "keeps what it catches (a development mail catcher such as Mailpit).";
  }
}
