/**
 * Reciprocal rank fusion: ranked lists made one, each item scored by the sum over the lists of
 * `1 / (k + rank)` (rank from 1). Scores of different kinds (BM25, cosine distance) never meet:
 * only ranks do, so neither list needs calibrating against the other.
 */

/** The constant of the original paper (Cormack et al., 2009), LanceDB's RRF reranker's too. */
export const RRF_K = 60;

/**
 * The items of `lists`, each once (the first of those `keyOf` names alike), best fused score
 * first; ties keep the order they were first met in, lists taken in the order given.
 */
export function reciprocalRankFusion<T>(
  lists: readonly (readonly T[])[],
  keyOf: (item: T) => string,
  k: number = RRF_K,
): { item: T; score: number }[] {
  const fused = new Map<string, { item: T; score: number; first: number }>();
  let met = 0;
  for (const list of lists) {
    list.forEach((item, rank) => {
      const key = keyOf(item);
      const seen = fused.get(key);
      const score = 1 / (k + rank + 1);
      if (seen === undefined) fused.set(key, { item, score, first: met++ });
      else seen.score += score;
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .map(({ item, score }) => ({ item, score }));
}
