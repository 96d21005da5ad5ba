/**
 * Size cuts that respect known replies (`docs/specs/segmenter.md`, "Size cuts and replies"), on
 * the annotated IRC files of `../shared/data/irc/`: reply links severed by the segments with and
 * without the rule at maxSize 25, 50, 100 and 200, with every link known and with half known
 * (a seeded half), the change in segment count, and the segmenter's time with links against
 * without them on the same input in the same run (for information: the speed target is on
 * `npm run bench`, whose streams carry no links, so the rule must cost nothing there).
 *
 *   npm run bench:replies
 *   npm run bench:replies -- --data DIR
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConversationSegmenter, type ReplyLinks } from "convoseg/segmenter";
import { random } from "../local/sample.js";
import { benchArgs, usageError } from "./args.js";

const USAGE = `
npm run bench:replies [-- --data DIR] [--json]

Reply links severed by size cuts, with and without the reply rule, on the annotated IRC files
(ubuntu.*.jsonl and newdomains.*.jsonl; system lines left out; a line's earliest annotated
parent as its replyTo) at maxSize 25, 50, 100 and 200, with every link known and with a
seeded half known; the change in segment count; and the segmenter's time with links against
without, on the same input in the same run.

  --data DIR   the IRC data folder (default ../shared/data/irc)
  --seed N     the seed that picks the half of the links known (default 20261203)
  --json       print the measures as one JSON object
  --help       this text
`;
const TARGET_REDUCTION_AT_50 = 0.2;
const TARGET_MORE_SEGMENTS_AT_50 = 0.07;
const MAX_SIZES = [25, 50, 100, 200];

interface Line {
  id: number;
  ts: number;
  replyTo?: number;
}

const values = benchArgs(USAGE, {
  data: { type: "string", default: "../shared/data/irc" },
  json: { type: "boolean", default: false },
  seed: { type: "string", default: "20261203" },
});
const files = annotatedFiles(values.data);

function annotatedFiles(dir: string): Line[][] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^(ubuntu\.(dev|test)|newdomains)\..*\.jsonl$/.test(n));
  } catch (error) {
    return usageError(USAGE, `--data ${dir}: ${(error as Error).message}`);
  }
  if (names.length === 0) usageError(USAGE, `--data ${dir} holds no annotated IRC files`);
  return names.sort().map((name) => {
    const lines: Line[] = [];
    for (const text of readFileSync(join(dir, name), "utf8").split("\n")) {
      if (text.trim() === "") continue;
      const row = JSON.parse(text) as {
        id: number;
        ts: string;
        system?: boolean;
        replyTo?: number[];
      };
      if (row.system === true) continue;
      const parents = (row.replyTo ?? []).filter((p) => p !== row.id);
      const line: Line = { id: row.id, ts: Date.parse(row.ts) };
      if (parents.length > 0) line.replyTo = Math.min(...parents);
      lines.push(line);
    }
    // A parent that is a system line (left out) is no link.
    const ids = new Set(lines.map((l) => l.id));
    for (const line of lines)
      if (line.replyTo !== undefined && !ids.has(line.replyTo)) delete line.replyTo;
    return lines;
  });
}

/** The same lines with a seeded half of their links forgotten. */
function halfKnown(lines: Line[], next: () => number): Line[] {
  return lines.map((line) => {
    if (line.replyTo === undefined || next() < 0.5) return line;
    const { replyTo: _, ...rest } = line;
    return rest;
  });
}

/** Links (all of them, known to the segmenter or not) whose ends are in different segments. */
function severed(segments: Line[][], all: Line[]): number {
  const segmentOf = new Map<number, number>();
  segments.forEach((segment, s) => {
    for (const line of segment) segmentOf.set(line.id, s);
  });
  let count = 0;
  for (const line of all) {
    if (line.replyTo === undefined) continue;
    if (segmentOf.get(line.id) !== segmentOf.get(line.replyTo)) count++;
  }
  return count;
}

const ts = (l: Line) => l.ts;
const links: ReplyLinks<Line> = { id: (l) => l.id, replyTo: (l) => l.replyTo };
const totalLinks = files.reduce((n, f) => n + f.filter((l) => l.replyTo !== undefined).length, 0);

interface Row {
  maxSize: number;
  known: "all" | "half";
  severedWithout: number;
  severedWith: number;
  reduction: number;
  segmentsWithout: number;
  segmentsWith: number;
  moreSegments: number;
}

const rows: Row[] = [];
for (const maxSize of MAX_SIZES) {
  const segmenter = new ConversationSegmenter({ maxSize });
  for (const known of ["all", "half"] as const) {
    const next = random(Number(values.seed));
    let severedWithout = 0;
    let severedWith = 0;
    let segmentsWithout = 0;
    let segmentsWith = 0;
    for (const lines of files) {
      const given = known === "all" ? lines : halfKnown(lines, next);
      const plain = segmenter.closedSegments(lines, Number.MAX_SAFE_INTEGER, ts);
      const linked = segmenter.closedSegments(given, Number.MAX_SAFE_INTEGER, ts, undefined, links);
      severedWithout += severed(plain, lines);
      severedWith += severed(linked, lines);
      segmentsWithout += plain.length;
      segmentsWith += linked.length;
    }
    rows.push({
      maxSize,
      known,
      severedWithout,
      severedWith,
      reduction: 1 - severedWith / severedWithout,
      segmentsWithout,
      segmentsWith,
      moreSegments: segmentsWith / segmentsWithout - 1,
    });
  }
}

/** Milliseconds per pass over every file, best of several rounds, with and without links. */
function timing(maxSize: number): { without: number; with: number; ratio: number } {
  const segmenter = new ConversationSegmenter({ maxSize });
  const pass = (withLinks: boolean) => {
    const started = performance.now();
    for (let r = 0; r < 20; r++) {
      for (const lines of files) {
        segmenter.closedSegments(
          lines,
          Number.MAX_SAFE_INTEGER,
          ts,
          undefined,
          withLinks ? links : undefined,
        );
      }
    }
    return (performance.now() - started) / 20;
  };
  let without = Number.POSITIVE_INFINITY;
  let withLinks = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 7; round++) {
    without = Math.min(without, pass(false));
    withLinks = Math.min(withLinks, pass(true));
  }
  return { without, with: withLinks, ratio: withLinks / without };
}
const speed = timing(50);

const at50 = rows.find((r) => r.maxSize === 50 && r.known === "all") as Row;
const verdicts = {
  reductionAt50: at50.reduction >= TARGET_REDUCTION_AT_50,
  moreSegmentsAt50: at50.moreSegments <= TARGET_MORE_SEGMENTS_AT_50,
};
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ files: files.length, links: totalLinks, rows, speed, verdicts })}\n`,
  );
} else {
  process.stdout.write(
    `${files.length} annotated IRC files, ${files.reduce((n, f) => n + f.length, 0)} lines without system lines, ${totalLinks} reply links\n\n`,
  );
  process.stdout.write(
    "maxSize  known  severed before  after  fewer    segments before  after  more\n",
  );
  for (const r of rows) {
    process.stdout.write(
      `${String(r.maxSize).padStart(7)}  ${r.known.padEnd(5)}  ${String(r.severedWithout).padStart(14)}  ${String(r.severedWith).padStart(5)}  ${pct(r.reduction).padStart(6)}  ${String(r.segmentsWithout).padStart(15)}  ${String(r.segmentsWith).padStart(5)}  ${pct(r.moreSegments).padStart(5)}\n`,
    );
  }
  process.stdout.write(
    `\nsegmenter time at maxSize 50: ${speed.without.toFixed(2)} ms without links, ${speed.with.toFixed(2)} ms with (${speed.ratio.toFixed(2)}x)\n`,
  );
  process.stdout.write(
    `targets: >= ${pct(TARGET_REDUCTION_AT_50)} fewer severed at 50 with every link known: ${verdicts.reductionAt50 ? "met" : "NOT met"}; <= ${pct(TARGET_MORE_SEGMENTS_AT_50)} more segments: ${verdicts.moreSegmentsAt50 ? "met" : "NOT met"}\n`,
  );
}
