/**
 * The labelled topic pairs and how a matcher scores on them: precision and recall of "same
 * topic" (pure; the bench and a unit test share it).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface TopicPair {
  a: string;
  b: string;
  /** Whether a reader would want the two listed as one topic. */
  same: boolean;
}

export const PAIRS_FILE = fileURLToPath(
  new URL("../test/knowledge/topics/fixtures/topic-pairs.json", import.meta.url),
);

/** The pairs of `file` (`{"pairs": [{a, b, same}]}`), each checked so a bad line is named. */
export function readPairs(file = PAIRS_FILE): TopicPair[] {
  const { pairs } = JSON.parse(readFileSync(file, "utf8")) as { pairs?: unknown };
  if (!Array.isArray(pairs)) throw new Error(`${file}: no "pairs" array`);
  return pairs.map((pair, i) => {
    const { a, b, same } = (pair ?? {}) as Partial<TopicPair>;
    if (typeof a !== "string" || typeof b !== "string" || typeof same !== "boolean") {
      throw new Error(`${file}: pairs[${i}] is not {a: string, b: string, same: boolean}`);
    }
    return { a, b, same };
  });
}

export interface PairScores {
  pairs: number;
  positives: number;
  truePositives: number;
  falsePositives: TopicPair[];
  falseNegatives: TopicPair[];
  precision: number;
  recall: number;
}

/** How `same` agrees with the labels: precision and recall of its "same". */
export function scorePairs(
  pairs: readonly TopicPair[],
  same: (a: string, b: string) => boolean,
): PairScores {
  const falsePositives: TopicPair[] = [];
  const falseNegatives: TopicPair[] = [];
  let truePositives = 0;
  for (const pair of pairs) {
    const said = same(pair.a, pair.b);
    if (said && pair.same) truePositives++;
    else if (said) falsePositives.push(pair);
    else if (pair.same) falseNegatives.push(pair);
  }
  const saidSame = truePositives + falsePositives.length;
  const positives = pairs.filter((p) => p.same).length;
  return {
    pairs: pairs.length,
    positives,
    truePositives,
    falsePositives,
    falseNegatives,
    precision: saidSame === 0 ? 1 : truePositives / saidSame,
    recall: positives === 0 ? 1 : truePositives / positives,
  };
}
