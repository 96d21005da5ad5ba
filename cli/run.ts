import { createWriteStream } from "node:fs";
import { parseArgs } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { formatDuration, parseDuration } from "../lib/duration/index.js";
import { ingestionProblem } from "../lib/ingest/index.js";
import type { ChatMessage } from "../lib/messages/index.js";
import type { SegmentMessageV1 } from "../lib/pipeline/index.js";
import { DEFAULT_MAX_SIZE, DEFAULT_MIN_ITEMS, DEFAULT_SETTLE_MS } from "../lib/segmenter/index.js";
import { startDynamoDbLocal } from "../local/dynamodb-local.js";
import { LocalPipeline, MetricTotals } from "../local/pipeline.js";
import { type RefusedMessage, replay } from "../local/replay.js";
import { sampleChat } from "../local/sample.js";
import { startLocalSqs } from "../local/sqs.js";
import { Progress } from "./progress.js";
import { escapeControls, formatProblem, readMessages } from "./read-messages.js";
import { type CommandIO, warnIfMinItemsUnreachable } from "./segment.js";

export const RUN_USAGE = `Usage: npm start -- run [options]

Runs the whole pipeline on this machine: starts DynamoDB Local and an SQS emulator (unless
AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_SQS point elsewhere), ingests the messages in
timestamp order through the ingestion path on a simulated clock, ticks the scheduled segmenter,
and writes every delivered segment as one JSON line.

Options:
  --input FILE      chat messages as JSON lines (the segment command's format);
                    default: a generated multi-channel sample
  --out FILE        where to write the segments (default: standard output)
  --tick D          simulated time between ticks (default 5m)
  --settle D        silence that ends a conversation (default 24h)
  --max-size N      ceiling on one segment, in messages (default 500)
  --min-items N     drop segments with fewer messages (default 1)
  --grace D         extra quiet time before a conversation counts as settled (default 0)
  --skip-invalid    report input lines ingestion would refuse (malformed, or more than
                    DynamoDB takes) and go on without them; without it they stop the run
  -h, --help        this help

Exit status: 0 when every message was stored and the run finished; 1 when input lines were
refused (without --skip-invalid), a message could not be stored, or the input cannot be read;
2 for usage errors.`;

const RUN_OPTIONS = {
  input: { type: "string" },
  out: { type: "string" },
  tick: { type: "string" },
  settle: { type: "string" },
  "max-size": { type: "string" },
  "min-items": { type: "string" },
  grace: { type: "string" },
  "skip-invalid": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export interface RunOptions {
  input?: string;
  out?: string;
  tickMs: number;
  settle: number;
  maxSize: number;
  minItems: number;
  grace: number;
  skipInvalid: boolean;
}

/** Runs `run`; resolves to the process exit code. */
export async function runCommand(args: string[], io: CommandIO): Promise<number> {
  let options: RunOptions | "help";
  try {
    options = parseRunArgs(args);
  } catch (error) {
    io.stderr.write(`run: ${(error as Error).message}\n\n${RUN_USAGE}\n`);
    return 2;
  }
  if (options === "help") {
    io.stdout.write(`${RUN_USAGE}\n`);
    return 0;
  }
  warnIfMinItemsUnreachable(io, "run", options.minItems, options.maxSize);
  const loaded = await loadMessages(options, io);
  if (loaded === undefined) return 1;
  let outcome: Awaited<ReturnType<typeof runLocally>>;
  try {
    outcome = await runLocally(loaded.messages, options, io);
  } catch (error) {
    io.stderr.write(`run: ${escapeControls((error as Error).message)}\n`);
    return 1;
  }
  const { summary, refused } = outcome;
  for (const { message, field, problem } of refused) {
    const where = loaded.lines.get(message);
    const place = where === undefined ? `message ${JSON.stringify(message.id)}` : `line ${where}`;
    io.stderr.write(`${escapeControls(`${place}: ${field}: ${problem}`)} (not stored)\n`);
  }
  io.stderr.write(`${summary}\n`);
  if (refused.length > 0 && !options.skipInvalid) {
    io.stderr.write(`run: ${refused.length} message(s) were not stored (see above)\n`);
    return 1;
  }
  return 0;
}

function parseRunArgs(args: string[]): RunOptions | "help" {
  const { values, positionals } = parseArgs({ args, options: RUN_OPTIONS, allowPositionals: true });
  if (values.help) return "help";
  if (positionals.length > 0)
    throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const count = (name: string, text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text) || Number(text) < 1) {
      throw new Error(`${name} must be a positive integer (got ${JSON.stringify(text)})`);
    }
    return Number(text);
  };
  const tickMs = parseDuration(values.tick ?? "5m", "--tick");
  if (tickMs <= 0) throw new Error("--tick must be longer than 0");
  return {
    input: values.input,
    out: values.out,
    tickMs,
    settle:
      values.settle === undefined ? DEFAULT_SETTLE_MS : parseDuration(values.settle, "--settle"),
    maxSize: count("--max-size", values["max-size"], DEFAULT_MAX_SIZE),
    minItems: count("--min-items", values["min-items"], DEFAULT_MIN_ITEMS),
    grace: values.grace === undefined ? 0 : parseDuration(values.grace, "--grace"),
    skipInvalid: values["skip-invalid"] ?? false,
  };
}

/**
 * The input file's messages (reporting bad lines like `segment`, and lines ingestion would
 * refuse), or the generated sample; each message with the line it came from.
 */
async function loadMessages(
  options: RunOptions,
  io: CommandIO,
): Promise<{ messages: ChatMessage[]; lines: Map<ChatMessage, number> } | undefined> {
  if (options.input === undefined) {
    return { messages: sampleChat({ settle: options.settle, perChannel: 150 }), lines: new Map() };
  }
  const progress = new Progress(io.stderr);
  let read: Awaited<ReturnType<typeof readMessages>>;
  try {
    read = await readMessages(options.input, progress, io.stdin);
  } catch (error) {
    io.stderr.write(`run: cannot read ${options.input}: ${(error as Error).message}\n`);
    return undefined;
  } finally {
    progress.finish();
  }
  const problems = [...read.problems];
  const kept = read.messages.filter(({ message, line }) => {
    const problem = ingestionProblem(message);
    if (problem !== undefined) problems.push({ line, ...problem });
    return problem === undefined;
  });
  problems.sort((a, b) => a.line - b.line);
  for (const problem of problems) {
    io.stderr.write(`${options.skipInvalid ? "skipped " : ""}${formatProblem(problem)}\n`);
  }
  if (problems.length > 0 && !options.skipInvalid) {
    io.stderr.write(
      `run: ${problems.length} invalid line(s); nothing was run (fix them, or pass --skip-invalid)\n`,
    );
    return undefined;
  }
  return {
    messages: kept.map((entry) => entry.message),
    lines: new Map(kept.map((entry) => [entry.message, entry.line])),
  };
}

/**
 * Starts (or finds) the emulators, replays `messages` through a fresh pipeline and writes the
 * delivered segments; returns the summary text.
 */
export async function runLocally(
  messages: ChatMessage[],
  options: RunOptions,
  io: CommandIO,
): Promise<{ summary: string; refused: RefusedMessage[] }> {
  const started = Date.now();
  const emulators = await startEmulators();
  try {
    const reads = new Map<string, number>();
    const dynamodb = emulators.dynamodb();
    countItemsRead(dynamodb, reads);
    const metrics = new MetricTotals();
    const pipeline = await LocalPipeline.create({
      dynamodb,
      sqs: emulators.sqs(),
      metrics,
      prefix: "run",
      settings: {
        maxSize: options.maxSize,
        settle: options.settle,
        minItems: options.minItems,
        grace: options.grace,
        maxArrivalsPerChannel: 5000,
        leaseMs: 60_000,
        holdTimeoutMs: 60_000,
        channelConcurrency: 4,
      },
    });
    const progress = new Progress(io.stderr);
    const out = options.out ? createWriteStream(options.out) : undefined;
    const result = await replay(pipeline, messages, {
      tickMs: options.tickMs,
      onProgress: (p) =>
        progress.update(
          () =>
            `replay: ${new Date(p.now).toISOString().slice(0, 16)}Z, ${p.ingested.toLocaleString("en-US")} of ${p.total.toLocaleString("en-US")} messages ingested, ${p.delivered.toLocaleString("en-US")} segments delivered`,
        ),
    });
    progress.finish();
    const lines = result.delivered.map(segmentLine).join("");
    if (out)
      await new Promise<void>((resolve, reject) =>
        out.end(lines, () => resolve()).on("error", reject),
      );
    else io.stdout.write(lines);
    const channels = new Set(messages.map((m) => m.channel)).size;
    const perMessage = (items = 0) => (items / Math.max(1, messages.length)).toFixed(2);
    const summary = [
      `channels ${channels}, messages ${messages.length}, segments ${result.delivered.length} (late ${result.delivered.filter((s) => s.late).length})`,
      `not stored ${result.refused.length}, late messages ${metrics.get("LateMessages")}, dropped messages ${metrics.get("DroppedMessages")} (below --min-items), channel errors ${metrics.get("ChannelErrors")}`,
      `ticks ${result.ticks}, DynamoDB reads per message: ${perMessage(reads.get(pipeline.config.messagesTable))} message items, ${perMessage(reads.get(pipeline.config.channelsTable))} channel state and due index items`,
      `wall time ${formatDuration(Date.now() - started)}`,
    ].join("\n");
    return { summary, refused: result.refused };
  } finally {
    await emulators.stop();
  }
}

/** The delivered segment as the output line: ids, flags and bounds; no message text. */
function segmentLine(segment: SegmentMessageV1): string {
  const { channel, segmentId, messageIds, late, belongsAfter, count, first, last } = segment;
  return `${JSON.stringify({ channel, segmentId, messageIds, late, belongsAfter, count, first, last })}\n`;
}

/** Counts the items DynamoDB returns to reads (Query, GetItem, BatchGetItem), per table. */
function countItemsRead(client: DynamoDBClient, reads: Map<string, number>): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const input = args.input as { TableName?: string };
      const output = (result.output ?? {}) as {
        Items?: unknown[];
        Item?: unknown;
        Responses?: Record<string, unknown[]>;
      };
      const add = (table: string | undefined, items: number) => {
        if (table !== undefined) reads.set(table, (reads.get(table) ?? 0) + items);
      };
      add(input.TableName, output.Items?.length ?? (output.Item ? 1 : 0));
      for (const [table, items] of Object.entries(output.Responses ?? {})) add(table, items.length);
      return result;
    },
    { step: "initialize", name: "countItemsRead" },
  );
}

interface Emulators {
  dynamodb(): DynamoDBClient;
  sqs(): SQSClient;
  stop(): Promise<void>;
}

/** DynamoDB Local and the SQS emulator, or the endpoints the environment names. */
async function startEmulators(): Promise<Emulators> {
  const stops: (() => Promise<void>)[] = [];
  const credentials = { accessKeyId: "local", secretAccessKey: "local" };
  const region = process.env.AWS_REGION ?? "us-east-1";
  let dynamodbEndpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  let sqsEndpoint = process.env.AWS_ENDPOINT_URL_SQS;
  try {
    if (!dynamodbEndpoint) {
      const local = await startDynamoDbLocal();
      stops.push(local.stop);
      dynamodbEndpoint = local.endpoint;
    }
    if (!sqsEndpoint) {
      const local = await startLocalSqs();
      stops.push(local.stop);
      sqsEndpoint = local.endpoint;
    }
  } catch (error) {
    await Promise.all(stops.map((stop) => stop()));
    throw error;
  }
  return {
    dynamodb: () => new DynamoDBClient({ endpoint: dynamodbEndpoint, region, credentials }),
    sqs: () => new SQSClient({ endpoint: sqsEndpoint, region, credentials }),
    stop: async () => {
      await Promise.all(stops.map((stop) => stop()));
    },
  };
}
