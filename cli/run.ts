import { createWriteStream } from "node:fs";
import { parseArgs } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { formatDuration, parseDuration } from "../lib/duration/index.js";
import type { ChatMessage } from "../lib/messages/index.js";
import type { SegmentMessageV1 } from "../lib/pipeline/index.js";
import { DEFAULT_MAX_SIZE, DEFAULT_MIN_ITEMS, DEFAULT_SETTLE_MS } from "../lib/segmenter/index.js";
import { startDynamoDbLocal } from "../local/dynamodb-local.js";
import { LocalPipeline, MetricTotals } from "../local/pipeline.js";
import { replay } from "../local/replay.js";
import { sampleChat } from "../local/sample.js";
import { startLocalSqs } from "../local/sqs.js";
import { Progress } from "./progress.js";
import { formatProblem, readMessages } from "./read-messages.js";
import type { CommandIO } from "./segment.js";

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
  --skip-invalid    report malformed input lines and go on without them
  -h, --help        this help`;

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
  const messages = await loadMessages(options, io);
  if (messages === undefined) return 1;
  const summary = await runLocally(messages, options, io);
  io.stderr.write(`${summary}\n`);
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

/** The input file's messages (reporting bad lines like `segment`), or the generated sample. */
async function loadMessages(
  options: RunOptions,
  io: CommandIO,
): Promise<ChatMessage[] | undefined> {
  if (options.input === undefined) return sampleChat({ settle: options.settle, perChannel: 150 });
  const progress = new Progress(io.stderr);
  const read = await readMessages(options.input, progress, io.stdin).finally(() =>
    progress.finish(),
  );
  for (const problem of read.problems) {
    io.stderr.write(`${options.skipInvalid ? "skipped " : ""}${formatProblem(problem)}\n`);
  }
  if (read.problems.length > 0 && !options.skipInvalid) {
    io.stderr.write(
      `run: ${read.problems.length} invalid line(s); nothing was run (fix them, or pass --skip-invalid)\n`,
    );
    return undefined;
  }
  return read.messages.map((entry) => entry.message);
}

/**
 * Starts (or finds) the emulators, replays `messages` through a fresh pipeline and writes the
 * delivered segments; returns the summary text.
 */
export async function runLocally(
  messages: ChatMessage[],
  options: RunOptions,
  io: CommandIO,
): Promise<string> {
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
    return [
      `channels ${channels}, messages ${messages.length}, segments ${result.delivered.length} (late ${result.delivered.filter((s) => s.late).length})`,
      `late messages ${metrics.get("LateMessages")}, dropped messages ${metrics.get("DroppedMessages")} (below --min-items), channel errors ${metrics.get("ChannelErrors")}`,
      `ticks ${result.ticks}, DynamoDB reads per message: ${perMessage(reads.get(pipeline.config.messagesTable))} message items, ${perMessage(reads.get(pipeline.config.channelsTable))} channel state and due index items`,
      `wall time ${formatDuration(Date.now() - started)}`,
    ].join("\n");
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
