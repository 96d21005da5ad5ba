/**
 * How well wordings of one topic merge by tokens alone (`lib/knowledge/topics`):
 * - on the labelled pairs (test/knowledge/topics/fixtures/topic-pairs.json, written for this project):
 *   precision and recall of `sameTopic`, with the pairs it gets wrong;
 * - on the annotated IRC files (through the offline extractor, as bench:topics runs it): each
 *   channel's topics before merging (one per normalized topic, as stored) and after, and how
 *   long merging a channel's topic index takes.
 *
 *   npm run bench:topicmerge                  both
 *   npm run bench:topicmerge -- --show 5      also each channel's first 5 merged topics with aliases
 *   npm run bench:topicmerge -- --json        the numbers as one JSON object
 */
import { pathToFileURL } from "node:url";
import { KeyphraseExtractor } from "convoseg/extraction/offline";
import { mergeSupports } from "convoseg/knowledge/read";
import { MemoryResultStore } from "convoseg/knowledge/store";
import { SegmentExtractor } from "convoseg/knowledge/write";
import { DEFAULT_MAX_SIZE } from "convoseg/segmenter";
import { sameTopic } from "convoseg/topics";
import { benchArgs, usageError } from "./args.js";
import { PAIRS_FILE, readPairs, scorePairs } from "./topic-pairs.js";
import { type Channel, channelsOf, inline, loadCorpus } from "./topics.js";

const USAGE = `
npm run bench:topicmerge [-- options]

Topic merging by tokens: precision and recall on the labelled topic pairs, and each channel's
topics before and after merging on the annotated IRC files (extracted offline).

  --pairs FILE      the labelled pairs (default test/knowledge/topics/fixtures/topic-pairs.json)
  --input FILE      another chat file (JSON lines) instead of the annotated IRC files
  --max-size N      the segment ceiling in messages (default ${DEFAULT_MAX_SIZE})
  --show N          print each channel's first N merged topics that have aliases (default 0)
  --errors          list the pairs the merge gets wrong
  --json            the numbers as one JSON object
  --help            this text
`;

interface ChannelCounts {
  channel: string;
  segments: number;
  before: number;
  after: number;
  /** Merged topics with more than one wording. */
  merged: number;
  mergeMs: number;
  examples: string[];
}

async function channelCounts(channel: Channel, show: number): Promise<ChannelCounts> {
  const store = new MemoryResultStore();
  const extractor = new SegmentExtractor({
    store,
    extractor: new KeyphraseExtractor(),
    model: "offline",
    promptVersion: "bench",
  });
  for (const [index, segment] of channel.segments.entries()) {
    const messages = segment.map((m) => inline(m, true));
    const [first, last] = [messages[0], messages[messages.length - 1]];
    await extractor.extract(
      {
        segmentId: `${channel.name}-${String(index).padStart(4, "0")}`,
        channel: channel.name,
        late: false,
        belongsAfter: null,
        count: messages.length,
        first: { id: first.id, ts: first.ts },
        last: { id: last.id, ts: last.ts },
      },
      messages,
    );
  }
  const supports = await store.listSupports(channel.name);
  const before = mergeSupports(supports, []);
  const started = performance.now();
  const after = mergeSupports(supports);
  const mergeMs = performance.now() - started;
  const withAliases = after.filter((t) => t.aliases.length > 0);
  return {
    channel: channel.name,
    segments: channel.segments.length,
    before: before.length,
    after: after.length,
    merged: withAliases.length,
    mergeMs,
    examples: withAliases
      .slice(0, show)
      .map((t) => `${t.topic} (${t.segments}; also: ${t.aliases.join(", ")})`),
  };
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

async function main(): Promise<void> {
  const values = benchArgs(USAGE, {
    pairs: { type: "string", default: PAIRS_FILE },
    input: { type: "string" },
    "max-size": { type: "string", default: String(DEFAULT_MAX_SIZE) },
    show: { type: "string", default: "0" },
    errors: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  });
  const maxSize = Number(values["max-size"]);
  const show = Number(values.show);
  if (!Number.isSafeInteger(maxSize) || maxSize < 1) {
    usageError(USAGE, "--max-size must be a positive integer");
  }
  if (!Number.isSafeInteger(show) || show < 0) usageError(USAGE, "--show must be a whole number");

  const scores = scorePairs(readPairs(values.pairs), sameTopic);
  const corpus = loadCorpus(values.input);
  const channels = channelsOf(corpus.messages, maxSize);
  const counts: ChannelCounts[] = [];
  for (const channel of channels) counts.push(await channelCounts(channel, show));
  const before = counts.reduce((n, c) => n + c.before, 0);
  const after = counts.reduce((n, c) => n + c.after, 0);

  if (values.json) {
    const { falsePositives, falseNegatives, ...rest } = scores;
    console.log(
      JSON.stringify(
        {
          pairs: {
            ...rest,
            falsePositives: falsePositives.length,
            falseNegatives: falseNegatives.length,
          },
          corpus: corpus.description,
          topics: { before, after },
          channels: counts.map(({ examples: _, ...c }) => c),
        },
        null,
        2,
      ),
    );
    return;
  }
  console.log(
    `Labelled pairs: ${scores.pairs} (${scores.positives} same), precision ${percent(scores.precision)} (${scores.falsePositives.length} wrongly merged), recall ${percent(scores.recall)} (${scores.falseNegatives.length} missed)`,
  );
  if (values.errors) {
    for (const p of scores.falsePositives) console.log(`  merged, not same: ${p.a} | ${p.b}`);
    for (const p of scores.falseNegatives) console.log(`  same, not merged: ${p.a} | ${p.b}`);
  }
  console.log("");
  console.log(
    `Topics per channel on ${corpus.description} (offline extractor, maxSize ${maxSize}):`,
  );
  const width = Math.max(7, ...counts.map((c) => c.channel.length)) + 2;
  console.log(
    `${"channel".padEnd(width)}${["segments", "before", "after", "merged", "change", "merge ms"].map((h) => h.padStart(10)).join("")}`,
  );
  for (const c of [...counts, total(counts)]) {
    console.log(
      `${c.channel.padEnd(width)}${[
        String(c.segments),
        String(c.before),
        String(c.after),
        String(c.merged),
        c.before === 0 ? "–" : `-${percent(1 - c.after / c.before)}`,
        c.mergeMs.toFixed(1),
      ]
        .map((cell) => cell.padStart(10))
        .join("")}`,
    );
  }
  if (show > 0) {
    for (const c of counts) {
      if (c.examples.length > 0) console.log(`\n${c.channel}: ${c.examples.join("; ")}`);
    }
  }
}

function total(counts: readonly ChannelCounts[]): ChannelCounts {
  const sum = (f: (c: ChannelCounts) => number) => counts.reduce((n, c) => n + f(c), 0);
  return {
    channel: "all",
    segments: sum((c) => c.segments),
    before: sum((c) => c.before),
    after: sum((c) => c.after),
    merged: sum((c) => c.merged),
    mergeMs: sum((c) => c.mergeMs),
    examples: [],
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
