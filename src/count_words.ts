// A number with its noun in the right number: "1 minute", "3 minutes", "0 entries".

/**
 * `n` and the noun: the singular for exactly 1, else `plural` (the singular with an "s" unless
 * given). English only, as every text of Vestibule is.
 */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** A wait in whole minutes, rounded up, for "Try again in …": "1 minute", "3 minutes". */
export function minutesOf(seconds: number): string {
  return countOf(Math.max(1, Math.ceil(seconds / 60)), "minute");
}
