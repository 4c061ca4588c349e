// The human-entered values every entry point (forms, onboarding tools, admin) parses alike.
import * as v from "valibot";

/** An e-mail address, trimmed and lower-cased so one mailbox is one account. */
export const EmailSchema = v.pipe(
  v.string("email must be a string"),
  v.trim(),
  v.toLowerCase(),
  v.nonEmpty("email is required"),
  v.maxLength(254, "email must be at most 254 characters"),
  v.email("email must be an e-mail address like name@example.com"),
);

export const BusinessNameSchema = v.pipe(
  v.string("business name must be a string"),
  v.trim(),
  v.nonEmpty("business name is required"),
  v.maxLength(100, "business name must be at most 100 characters"),
  oneLine("business name must not contain control characters"),
);

export const RoleSchema = v.picklist(["owner", "member"], "role must be owner or member");

/**
 * Refuses C0 controls and DEL (a line break, a tab) in text that is one line wherever it is
 * shown: a name or label that reaches a mail's body or subject could otherwise start lines of
 * its own there.
 */
export function oneLine(message = "must not contain control characters such as a line break") {
  return v.check((s: string) => !hasControlCharacters(s), message);
}

/** C0 controls and DEL: never part of a name or a path we accept. */
export function hasControlCharacters(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}
