// Business names as people compare them, and as a page shows them where a person chooses one:
// two businesses may share a name (signing up twice, an operator's choice), so a repeated name
// carries its creation moment and the short form of its id.
import { utcMinute } from "../ui/auth_pages.ts";
import type { Business } from "./model.ts";

/** One name however it is spaced or capitalised ("Acme  bakery" is "Acme Bakery"). */
export function sameBusinessName(a: string, b: string): boolean {
  return _normalized(a) === _normalized(b);
}

/**
 * How each of `businesses` is named among the others: its name, and for a name that repeats,
 * "(created 2026-11-29 10:02 UTC, id 3f2a9c1b)".
 */
export function businessLabels(businesses: readonly Business[]): (business: Business) => string {
  const counts = new Map<string, number>();
  for (const b of businesses) {
    counts.set(_normalized(b.name), (counts.get(_normalized(b.name)) ?? 0) + 1);
  }
  return (business) =>
    (counts.get(_normalized(business.name)) ?? 0) > 1
      ? `${business.name} (created ${utcMinute(business.createdAt)}, id ${business.id.slice(0, 8)})`
      : business.name;
}

function _normalized(name: string): string {
  return name.trim().replace(/\s+/g, " ").toLowerCase();
}
