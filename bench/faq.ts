/**
 * How well recurring questions group into FAQ entries (`lib/knowledge/faq`), on the labelled
 * question pairs of bench/faq/pairs.jsonl (written for this project: tech-support questions in
 * the manner of the Ubuntu IRC sample, none copied from it). The pairs are split in two halves
 * (alternate pairs of rows): the threshold is chosen on the dev half (the highest recall at a
 * precision of at least 95%, ties to the higher threshold) and reported on the test half.
 * Two measures: the pairwise matcher (`sameQuestion`), and grouping (every question of a half
 * grouped at once by `groupQuestions`, a pair "same" when its two questions share a group, so
 * that links made through a third question count).
 *
 *   npm run bench:faq                    dev and test figures at the tuned and default thresholds
 *   npm run bench:faq -- --errors        also the test pairs it gets wrong
 *   npm run bench:faq -- --hashing 0.8   also with a character-trigram hashing embedder joined
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  DEFAULT_QUESTION_SIMILARITY,
  groupQuestions,
  questionMatcher,
  sameQuestion,
} from "convoseg/faq";
import { embeddingMatcher, type TopicMatcher } from "convoseg/topics";
import { benchArgs, usageError } from "./args.js";
import { type PairScores, scorePairs, type TopicPair } from "./topic-pairs.js";

const PAIRS = fileURLToPath(new URL("faq/pairs.jsonl", import.meta.url));

const USAGE = `
npm run bench:faq [-- options]

FAQ grouping: precision and recall on labelled question pairs (same question or not), the
threshold tuned on the dev half and reported on the test half.

  --pairs FILE      the labelled pairs, JSON lines {"a", "b", "same"} (default bench/faq/pairs.jsonl)
  --threshold T     report at this Jaccard threshold instead of tuning one
  --hashing S       also join a character-trigram hashing embedder at cosine S (0 to 1)
  --errors          list the test pairs the grouping gets wrong
  --json            the numbers as one JSON object
  --help            this text
`;

function readPairs(file: string): TopicPair[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, i) => {
      const { a, b, same } = JSON.parse(line) as Partial<TopicPair>;
      if (typeof a !== "string" || typeof b !== "string" || typeof same !== "boolean") {
        throw new Error(`${file}:${i + 1} is not {a: string, b: string, same: boolean}`);
      }
      return { a, b, same };
    });
}

/** A bag of character trigrams hashed into 256 dimensions: a cheap, scripted embedder. */
function hashingVectors(texts: readonly string[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const text of texts) {
    const v = new Array<number>(256).fill(0);
    const t = ` ${text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, " ")
      .trim()} `;
    for (let i = 0; i + 3 <= t.length; i++) {
      let h = 2166136261;
      for (const c of t.slice(i, i + 3)) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
      v[(h >>> 0) % 256] += 1;
    }
    out.set(text, v);
  }
  return out;
}

/** Pairs "same" when grouping all their questions at once puts both in one group. */
function groupedScores(pairs: readonly TopicPair[], matchers: TopicMatcher[]): PairScores {
  const texts = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
  const entries = groupQuestions(
    texts.map((question, i) => ({ question, askedId: `m${i}`, askedTs: i, answerIds: [] })),
    { matchers, minCount: 1, maxEvidence: Number.POSITIVE_INFINITY },
  );
  const group = new Map<string, number>();
  for (const [g, entry] of entries.entries()) {
    group.set(entry.question, g);
    for (const w of entry.wordings) group.set(w, g);
  }
  return scorePairs(pairs, (a, b) => group.get(a) === group.get(b));
}

function matchersAt(threshold: number, texts: readonly string[], hashing?: number): TopicMatcher[] {
  const token = questionMatcher(threshold);
  return hashing === undefined
    ? [token]
    : [token, embeddingMatcher(hashingVectors(texts), hashing)];
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;
const line = (s: PairScores) =>
  `precision ${percent(s.precision)}, recall ${percent(s.recall)} (${s.truePositives}/${s.positives} same found, ${s.falsePositives.length} wrongly joined, ${s.pairs} pairs)`;

function main(): void {
  const values = benchArgs(USAGE, {
    pairs: { type: "string", default: PAIRS },
    threshold: { type: "string" },
    hashing: { type: "string" },
    errors: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  });
  const fixed = values.threshold === undefined ? undefined : Number(values.threshold);
  if (fixed !== undefined && !(fixed > 0 && fixed <= 1)) {
    usageError(USAGE, "--threshold must be above 0 and at most 1");
  }
  const hashing = values.hashing === undefined ? undefined : Number(values.hashing);
  if (hashing !== undefined && !(hashing > 0 && hashing <= 1)) {
    usageError(USAGE, "--hashing must be above 0 and at most 1");
  }
  let pairs: TopicPair[] = [];
  try {
    pairs = readPairs(values.pairs);
  } catch (error) {
    usageError(USAGE, (error as Error).message);
  }
  // Alternate pairs of rows: the file interleaves same and different pairs.
  const dev = pairs.filter((_, i) => Math.floor(i / 2) % 2 === 0);
  const test = pairs.filter((_, i) => Math.floor(i / 2) % 2 === 1);
  const texts = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];

  const sweep = [];
  for (let t = 0.3; t <= 0.951; t += 0.05) {
    const threshold = Number(t.toFixed(2));
    sweep.push({ threshold, dev: groupedScores(dev, matchersAt(threshold, texts, hashing)) });
  }
  const tuned =
    fixed ??
    sweep
      .filter((s) => s.dev.precision >= 0.95)
      .sort((a, b) => b.dev.recall - a.dev.recall || b.threshold - a.threshold)[0]?.threshold ??
    DEFAULT_QUESTION_SIMILARITY;
  const at = (threshold: number) => ({
    threshold,
    pairwiseTest: scorePairs(test, (a, b) => sameQuestion(a, b, threshold)),
    groupedDev: groupedScores(dev, matchersAt(threshold, texts, hashing)),
    groupedTest: groupedScores(test, matchersAt(threshold, texts, hashing)),
  });
  const results = [
    at(tuned),
    ...(tuned === DEFAULT_QUESTION_SIMILARITY ? [] : [at(DEFAULT_QUESTION_SIMILARITY)]),
  ];
  const strip = ({ falsePositives, falseNegatives, ...rest }: PairScores) => rest;

  if (values.json) {
    const json = results.map((r) => ({
      threshold: r.threshold,
      pairwiseTest: strip(r.pairwiseTest),
      groupedDev: strip(r.groupedDev),
      groupedTest: strip(r.groupedTest),
    }));
    process.stdout.write(
      `${JSON.stringify({ pairs: pairs.length, dev: dev.length, test: test.length, hashing, tuned, results: json })}\n`,
    );
    return;
  }
  const out = [
    `FAQ grouping on ${pairs.length} labelled question pairs (${dev.length} dev, ${test.length} test)${hashing === undefined ? "" : `, hashing embedder joined at cosine ${hashing}`}`,
    `threshold sweep on dev (grouped): ${sweep.map((s) => `${s.threshold}: ${percent(s.dev.precision)}/${percent(s.dev.recall)}`).join(", ")}`,
  ];
  for (const r of results) {
    const label =
      r.threshold === tuned ? (fixed === undefined ? "tuned on dev" : "as given") : "default";
    out.push(`Jaccard threshold ${r.threshold} (${label}):`);
    out.push(`  grouped, dev:   ${line(r.groupedDev)}`);
    out.push(`  grouped, test:  ${line(r.groupedTest)}`);
    out.push(`  pairwise, test: ${line(r.pairwiseTest)}`);
  }
  if (values.errors) {
    const [first] = results;
    for (const p of first.groupedTest.falsePositives)
      out.push(`  joined, not same: ${p.a} | ${p.b}`);
    for (const p of first.groupedTest.falseNegatives)
      out.push(`  same, not joined: ${p.a} | ${p.b}`);
  }
  process.stdout.write(`${out.join("\n")}\n`);
}

main();
