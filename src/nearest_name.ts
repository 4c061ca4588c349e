// "Did you mean": a misspelt name is answered with the known name closest to it.

/** The candidate with the smallest edit distance to `name` (the first of equals). */
export function nearestName(name: string, candidates: readonly string[]): string {
  let best = candidates[0] ?? "";
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = _editDistance(name, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions of one character. */
function _editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length]!;
}
