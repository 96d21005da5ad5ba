/**
 * What the scheduled pipeline costs, replayed on DynamoDB Local and the SQS emulator: DynamoDB
 * write and read units per message (from `ReturnConsumedCapacity`, corrected where DynamoDB Local
 * under-reports, `bench/capacity.ts`) by operation and by table and index, beside the floor of
 * one conditional put per message plus its index entry; and read amplification against the naive
 * tick that re-reads every open tail whenever its channel is due (`bench/naive-tick.ts`), in the
 * same run on the same stored messages. It starts the emulators itself and stops them at the end.
 *
 *   npm run bench:pipeline                        both scenarios below
 *   npm run bench:pipeline -- --only irc          the IRC replay (--messages, default 20,000)
 *   npm run bench:pipeline -- --only sample       the default sample of `npm start -- run`
 *   npm run bench:pipeline -- --max-size 500      the segmenter's default ceiling (IRC: 100)
 *   npm run bench:pipeline -- --generate          generated chat on 200 channels (--channels)
 *   npm run bench:pipeline -- --input FILE        another single-channel stream (JSON lines)
 *
 * IRC input: the first N messages of `../shared/data/irc/ubuntu-stream.jsonl` (next to the
 * repository) when it exists, else generated chat: bursts, lulls below settle and silences beyond
 * it, on channels from busy to quiet. The IRC stream is one channel made of windows of real chat,
 * a few hours each, separated by artificial gaps of days to months. Each window (a run without a
 * silence over two hours: this reproduces the 127 windows of `ubuntu-stream.samples.tsv` exactly)
 * becomes a channel of its own, so that real conversations stay whole, and the windows run side by
 * side from a common start, as the channels of one deployment do. With more windows than
 * `--channels`, a channel's windows follow one another, two days apart.
 *
 * The simulated clock ticks every 5 minutes, skipping ticks at which nothing arrives and no
 * channel is due; at each it ingests what the clock has reached (the real ingestion path), runs
 * one tick of each variant and drains the queues, until every conversation has settled.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { type DynamoDBClient, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { itemSize } from "convoseg/dynamodb";
import { DynamoDbStore } from "convoseg/history/dynamodb";
import {
  authorEntry,
  indexEntry,
  messageItem,
  PARTITION_KEY,
  SORT_KEY,
} from "convoseg/history/schema";
import { compareRefs } from "convoseg/identity";
import { ChannelPositions, historyMessage, ingest } from "convoseg/ingest";
import { type ChatMessage, parseChatMessage } from "convoseg/messages";
import {
  type ConversationMode,
  type PipelineLogger,
  type PipelineMetrics,
  runTick,
  type SegmentFunctionConfig,
  type TickDependencies,
  type TickSettings,
  tickDependencies,
} from "convoseg/pipeline";
import { parseSegmentBody, type SegmentMessageV1 } from "convoseg/pipeline/contract";
import { createChannelsTable, dueShardOf } from "convoseg/pipeline/schema";
import { DynamoDbChannelStore } from "convoseg/pipeline/store";
import { DEFAULT_MAX_SIZE, DEFAULT_SETTLE_MS } from "convoseg/segmenter";
import { type Emulators, startEmulators } from "../local/emulators.js";
import { LocalPipeline } from "../local/pipeline.js";
import { random, sampleChat } from "../local/sample.js";
import { createSegmentQueue, drainQueue } from "../local/sqs.js";
import { benchArgs, usageError } from "./args.js";
import { CapacityMeter, writeUnits } from "./capacity.js";
import { runNaiveTick } from "./naive-tick.js";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TICK_MS = 5 * MINUTE;
const T0 = Date.UTC(2025, 0, 6);
/** A silence this long inside the IRC stream is a gap between its windows. */
const WINDOW_GAP_MS = 2 * HOUR;
/** Between two windows placed in one channel: beyond settle, as between the real windows. */
const CHANNEL_GAP_MS = 2 * DAY;
/** Between the starts of neighbouring channels' first windows. */
const STAGGER_MS = MINUTE;
/** The spec's target: each message read from DynamoDB at most this often over its life. */
const TARGET_READS = 2;
const DEFAULT_INPUT = fileURLToPath(
  new URL("../../shared/data/irc/ubuntu-stream.jsonl", import.meta.url),
);

interface Options {
  messages: number;
  channels: number;
  maxSize: number;
  input?: string;
  generate: boolean;
  only?: "irc" | "sample";
  conversations: ConversationMode;
}

const USAGE = `
npm run bench:pipeline [-- options]

The scheduled pipeline replayed on DynamoDB Local and the SQS emulator: DynamoDB units per
message by operation, table and index beside the floor, and read amplification against a naive
tick, in the same run on the same stored messages.

  --only irc|sample   one scenario: the IRC replay, or the default sample of npm start -- run
  --messages N        IRC replay: the first N messages of ../shared/data/irc/ubuntu-stream.jsonl
                      (default 20000; generated chat when the file is absent)
  --max-size N        the segmenter's ceiling in messages (default 100)
  --generate          generated chat instead of the IRC stream
  --channels N        channels of generated chat, or most channels of the IRC windows (default 200)
  --input FILE        another single-channel stream (JSON lines)
  --conversations M   linked (the default, as deployed: each conversation of the reply linker a
                      stream, its window in the tick state, inferred parents written on messages)
                      or contiguous (the timeline cut at silences and sizes)
  --help              this text
`;

function parseOptions(): Options {
  const values = benchArgs(USAGE, {
    messages: { type: "string", default: "20000" },
    channels: { type: "string", default: "200" },
    "max-size": { type: "string", default: "100" },
    input: { type: "string" },
    generate: { type: "boolean", default: false },
    only: { type: "string" },
    conversations: { type: "string", default: "linked" },
  });
  if (values.conversations !== "linked" && values.conversations !== "contiguous") {
    usageError(USAGE, "--conversations must be linked or contiguous");
  }
  if (values.only !== undefined && values.only !== "irc" && values.only !== "sample") {
    usageError(USAGE, "--only must be irc or sample");
  }
  const count = (name: string, text: string) => {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < 1)
      usageError(USAGE, `--${name} must be a positive integer`);
    return n;
  };
  return {
    messages: count("messages", values.messages),
    channels: count("channels", values.channels),
    maxSize: count("max-size", values["max-size"]),
    input: values.input,
    generate: values.generate,
    only: values.only as Options["only"],
    conversations: values.conversations as ConversationMode,
  };
}

// ---------------------------------------------------------------------------------------------
// Input

interface Stream {
  messages: ChatMessage[];
  channels: number;
  source: string;
}

/** The first `messages` of the IRC stream (or `--input`) spread over channels, else generated. */
function loadStream(options: Options): Stream {
  const found = existsSync(DEFAULT_INPUT) ? DEFAULT_INPUT : undefined;
  const path = options.generate ? undefined : (options.input ?? found);
  if (path === undefined) {
    const messages = generatedChat(options.messages, options.channels, random(42));
    return { messages, channels: channelCount(messages), source: "generated chat" };
  }
  const windows = splitWindows(readChat(path).slice(0, options.messages));
  const messages = placeWindows(windows, options.channels).sort(compareRefs);
  return {
    messages,
    channels: channelCount(messages),
    source: `the first of ${basename(path)}: ${windows.length} windows side by side`,
  };
}

const channelCount = (messages: ChatMessage[]) => new Set(messages.map((m) => m.channel)).size;

/** Chat messages from a JSON-lines file, in channel order; a bad line fails with its number. */
function readChat(path: string): ChatMessage[] {
  const lines = readFileSync(path, "utf8").split("\n");
  return lines
    .flatMap((line, index) => {
      if (line.trim() === "") return [];
      try {
        return [parseChatMessage(JSON.parse(line))];
      } catch (error) {
        throw new Error(`${path}:${index + 1}: ${(error as Error).message}`);
      }
    })
    .sort(compareRefs);
}

/** Runs of messages without a silence longer than {@link WINDOW_GAP_MS}. */
function splitWindows(messages: ChatMessage[]): ChatMessage[][] {
  const windows: ChatMessage[][] = [];
  let previous = Number.NEGATIVE_INFINITY;
  for (const message of messages) {
    if (message.ts - previous > WINDOW_GAP_MS) windows.push([]);
    windows[windows.length - 1].push(message);
    previous = message.ts;
  }
  return windows;
}

/**
 * Window `w` goes to channel `w % channels`, shifted in time (gaps within it kept) to start at the
 * common start, staggered by channel, or {@link CHANNEL_GAP_MS} after the channel's previous one.
 */
function placeWindows(windows: ChatMessage[][], channels: number): ChatMessage[] {
  const free = new Map<number, number>();
  return windows.flatMap((window, w) => {
    const k = w % channels;
    const shift = (free.get(k) ?? T0 + k * STAGGER_MS) - window[0].ts;
    free.set(k, window[window.length - 1].ts + shift + CHANNEL_GAP_MS);
    const channel = `irc-${String(k).padStart(3, "0")}`;
    return window.map((m) => ({ ...m, channel, ts: m.ts + shift }));
  });
}

/** `n` messages over `channels` channels, busier and quieter ones (up to 5x apart), in time order. */
function generatedChat(n: number, channels: number, next: () => number): ChatMessage[] {
  const weights = Array.from({ length: channels }, () => 0.25 + next());
  const total = sum(weights);
  const counts = weights.map((w) => Math.floor((n * w) / total));
  const missing = n - sum(counts);
  for (let k = 0; k < missing; k++) counts[k]++;
  return counts
    .flatMap((count, k) => channelChat(`chat-${String(k).padStart(3, "0")}`, count, next))
    .sort(compareRefs);
}

function channelChat(channel: string, count: number, next: () => number): ChatMessage[] {
  let ts = T0 + Math.floor(next() * HOUR);
  return Array.from({ length: count }, (_, i) => {
    ts += chatGap(next);
    return {
      id: `${channel}-${String(i).padStart(6, "0")}`,
      ts,
      channel,
      user: `user${Math.floor(next() * 20)}`,
      text: `message ${i} ${"lorem ipsum ".repeat(Math.floor(next() * 8))}`.trim(),
    };
  });
}

/** Bursts (ties and seconds apart), lulls of minutes, pauses below settle, silences beyond it. */
function chatGap(next: () => number): number {
  const roll = next();
  if (roll < 0.001) return DEFAULT_SETTLE_MS + Math.floor(next() * 2 * DEFAULT_SETTLE_MS);
  if (roll < 0.005) return Math.floor((2 + next() * 18) * HOUR);
  if (roll < 0.025) return Math.floor((2 + next() * 28) * MINUTE);
  if (roll < 0.4) return 0;
  return Math.floor(1 + next() * 29) * SECOND;
}

// ---------------------------------------------------------------------------------------------
// Measuring

type Item = Record<string, unknown>;

/** What the tally reads of a request. */
interface Call {
  TableName?: string;
  IndexName?: string;
}

interface Result {
  Items?: Item[];
  Item?: Item;
  Responses?: Record<string, Item[]>;
}

type Handler = (args: { input: object }) => Promise<{ output: object }>;

/** What the benchmark needs of an SDK client's middleware stack, whichever client it is. */
interface MiddlewareStack {
  add(
    middleware: (next: Handler, context: { commandName?: string }) => Handler,
    options: { step: "initialize"; name: string },
  ): void;
}

interface Volume {
  items: number;
  bytes: number;
}

const READS = new Set(["QueryCommand", "GetItemCommand", "BatchGetItemCommand", "ScanCommand"]);

/**
 * Everything one client sent, as an SDK middleware saw it. Sizes are approximate: the JSON of the
 * items returned, and of what a write sends (DynamoDB bills an update by the whole item's size).
 */
class Tally {
  /** Items read, by source: command, table role, index. */
  readonly reads = new Map<string, Volume>();
  /** Calls by command. */
  readonly requests = new Map<string, number>();
  /** How often each message item was read, by key. */
  readonly messageReads = new Map<string, number>();

  constructor(private readonly tables: ReadonlyMap<string, string>) {}

  /** Counts every call of `client` from now on. */
  attach(client: DynamoDBClient | SQSClient): this {
    (client.middlewareStack as unknown as MiddlewareStack).add(
      (next, context) => async (args) => {
        const command = context.commandName ?? "unknown";
        this.requests.set(command, (this.requests.get(command) ?? 0) + 1);
        const result = await next(args);
        if (READS.has(command)) this.countReads(command, args.input as Call, result.output);
        return result;
      },
      { step: "initialize", name: "benchTally" },
    );
    return this;
  }

  private countReads(command: string, input: Call, output: Result): void {
    const found = output.Responses
      ? Object.entries(output.Responses).map(([table, items]) => ({ table, items }))
      : [{ table: input.TableName, items: output.Items ?? (output.Item ? [output.Item] : []) }];
    for (const { table, items } of found) {
      const role = this.role(table);
      const index = input.IndexName && !output.Responses ? `/${input.IndexName}` : "";
      add(this.reads, `${command.replace(/Command$/, "")} ${role}${index}`, items);
      if (role !== "messages") continue;
      for (const item of items) {
        const key = `${item[PARTITION_KEY]}\0${item[SORT_KEY]}`;
        this.messageReads.set(key, (this.messageReads.get(key) ?? 0) + 1);
      }
    }
  }

  private role(table: string | undefined): string {
    return this.tables.get(table ?? "") ?? table ?? "";
  }

  read(): Volume {
    return total([...this.reads.values()]);
  }

  requestCount(): number {
    return sum([...this.requests.values()]);
  }
}

function add(volumes: Map<string, Volume>, key: string, items: Item[]): void {
  const volume = volumes.get(key) ?? { items: 0, bytes: 0 };
  volume.items += items.length;
  for (const item of items) volume.bytes += Buffer.byteLength(JSON.stringify(item));
  volumes.set(key, volume);
}

const total = (volumes: Volume[]): Volume => ({
  items: sum(volumes.map((v) => v.items)),
  bytes: sum(volumes.map((v) => v.bytes)),
});
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

// ---------------------------------------------------------------------------------------------
// The replay

/** Clients of the harness itself (tables, queues, due times, draining): not measured. */
interface Harness {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
}

/** One tick implementation with its own channels table, queue and measured clients. */
interface Variant {
  name: string;
  tick(now: number): Promise<unknown>;
  drain(): Promise<SegmentMessageV1[]>;
  earliestDue(): Promise<number | null>;
  dynamodb: Tally;
  sqs: Tally;
  /** The capacity units of the variant's ticks. */
  units: CapacityMeter;
  tickMs: number;
  delivered: SegmentMessageV1[];
}

const ignoreMetrics: PipelineMetrics = { add() {} };

/** Any channel error stops the run: a measurement of a partial replay would mislead. */
const failOnError: PipelineLogger = {
  info() {},
  warn() {},
  error(message, attributes) {
    throw new Error(`${message}: ${JSON.stringify(attributes)}`);
  },
};

function createVariant(
  name: string,
  config: SegmentFunctionConfig,
  run: (deps: TickDependencies) => Promise<unknown>,
  emulators: Emulators,
  harness: Harness,
  tables: ReadonlyMap<string, string>,
): Variant {
  const dynamodb = emulators.dynamodb();
  const sqs = emulators.sqs();
  const channels = new DynamoDbChannelStore({
    client: harness.dynamodb,
    tableName: config.channelsTable,
  });
  return {
    name,
    tick: (now) =>
      run(
        tickDependencies(config, {
          dynamodb,
          sqs,
          metrics: ignoreMetrics,
          logger: failOnError,
          now: () => now,
        }),
      ),
    drain: async () =>
      (await drainQueue(harness.sqs, config.queueUrl)).map((m) => parseSegmentBody(m.Body ?? "")),
    earliestDue: () => channels.earliestDue(),
    dynamodb: new Tally(tables).attach(dynamodb),
    sqs: new Tally(tables).attach(sqs),
    units: new CapacityMeter(operationLabel(tables)).attach(dynamodb),
    tickMs: 0,
    delivered: [],
  };
}

/**
 * Names an operation by its command, the role of its table and what it touches: the kind of
 * channel item (marks, state), the message listing item, or the index queried.
 */
function operationLabel(tables: ReadonlyMap<string, string>) {
  return (command: string, input: Record<string, unknown>): string => {
    const name = command.replace(/Command$/, "");
    const table = String(input.TableName ?? "");
    const role = tables.get(table) ?? "other";
    if (command === "TransactWriteItemsCommand") return `${name} channels/state pages`;
    if (command === "BatchGetItemCommand") return `${name} messages`;
    if (typeof input.IndexName === "string") return `${name} ${role}/${input.IndexName}`;
    const key = (input.Key ?? input.Item) as Record<string, unknown> | undefined;
    const item = key?.item as { S?: string } | string | undefined;
    const kind = typeof item === "string" ? item : item?.S;
    if (role === "channels")
      return `${name} channels/${kind?.startsWith("state") ? "state" : (kind ?? "partition")}`;
    const messageKey = (key?.key as { S?: string } | string | undefined) ?? "";
    const text = typeof messageKey === "string" ? messageKey : (messageKey.S ?? "");
    if (role === "messages" && text === "#conversation") return `${name} messages/listing`;
    return `${name} ${role}`;
  };
}

interface Replay {
  variants: Variant[];
  /** Ingestion's calls; the naive channels table is told apart (role "naive"). */
  ingestion: Tally;
  /** The capacity units of ingestion. */
  ingestionUnits: CapacityMeter;
  /** The floor: one conditional put per message plus its index entry, in write units. */
  floor: number;
  ticks: number;
  ingestMs: number;
}

/**
 * Creates the real pipeline's tables and queue (LocalPipeline), and with `naive` a channels table
 * and a queue for the naive variant, and replays `messages` through them.
 */
async function runReplay(
  messages: ChatMessage[],
  settings: TickSettings,
  emulators: Emulators,
  naive: boolean,
): Promise<Replay> {
  const harness: Harness = { dynamodb: emulators.dynamodb(), sqs: emulators.sqs() };
  const { config } = await LocalPipeline.create({ ...harness, settings, prefix: "bench" });
  const configs = [config];
  const tables = new Map([
    [config.messagesTable, "messages"],
    [config.channelsTable, "channels"],
  ]);
  if (naive) {
    const naiveChannels = `${config.channelsTable}-naive`;
    await createChannelsTable(harness.dynamodb, naiveChannels);
    configs.push({
      ...config,
      channelsTable: naiveChannels,
      queueUrl: await createSegmentQueue(harness.sqs, `${naiveChannels}-segments`, {
        fifo: config.fifo,
        maxBodyBytes: config.maxBodyBytes,
      }),
    });
    tables.set(naiveChannels, "channels");
  }
  const ingestClient = emulators.dynamodb();
  const replay: Replay = {
    variants: [
      createVariant("convoseg", configs[0], runTick, emulators, harness, tables),
      ...(naive
        ? [createVariant("naive", configs[1], runNaiveTick, emulators, harness, tables)]
        : []),
    ],
    ingestion: new Tally(tables).attach(ingestClient),
    ingestionUnits: new CapacityMeter(operationLabel(tables)).attach(ingestClient),
    floor: sum(messages.map(floorUnits)),
    ticks: 0,
    ingestMs: 0,
  };
  const ingestAt = ingestor(ingestClient, harness.dynamodb, configs);
  await simulate(messages, replay, async (batch, now) => {
    const started = performance.now();
    await ingestAt(batch, now);
    replay.ingestMs += performance.now() - started;
  });
  return replay;
}

/**
 * The least any design pays to store a message: one conditional put of its item, the write of
 * its `byPosition` entry and, for a message with an author, of its `byAuthor` entry (what makes
 * a person erasable without a Scan): 3 units for a message under 1 KB.
 */
function floorUnits(message: ChatMessage): number {
  const item = messageItem(message.channel, historyMessage(message), 1_700_000_000_000_000_000n);
  const byAuthor = authorEntry(item);
  return (
    writeUnits(itemSize(item as unknown as Record<string, unknown>)) +
    writeUnits(itemSize(indexEntry(item))) +
    (byAuthor === undefined ? 0 : writeUnits(itemSize(byAuthor)))
  );
}

/**
 * The real ingestion path (`ingest` into the history store, as LocalPipeline.ingest does): writes
 * the messages once, at positions reserved on the real pipeline's channels table; the naive
 * variant's channels table gets the same sequence and due time from the harness, unmeasured.
 */
function ingestor(
  client: DynamoDBClient,
  harness: DynamoDBClient,
  configs: SegmentFunctionConfig[],
) {
  let clock = 0;
  const store = new DynamoDbStore({
    client,
    tableName: configs[0].messagesTable,
    positions: new ChannelPositions({
      client,
      tableName: configs[0].channelsTable,
      now: () => clock,
    }),
  });
  const real = new DynamoDbChannelStore({ client: harness, tableName: configs[0].channelsTable });
  return async (batch: ChatMessage[], now: number): Promise<void> => {
    clock = now;
    const result = await ingest(store, batch);
    const problem = result.rejected[0] ?? result.failed[0];
    if (problem) throw new Error(`ingestion failed: ${JSON.stringify(problem)}`);
    for (const channel of new Set(batch.map((m) => m.channel))) {
      const { marks } = await real.load(channel);
      for (const config of configs.slice(1)) {
        await harness.send(
          new UpdateItemCommand({
            TableName: config.channelsTable,
            Key: { channel: { S: channel }, item: { S: "marks" } },
            UpdateExpression: "SET seq = :seq, dueShard = :shard, dueAt = :now",
            ExpressionAttributeValues: {
              ":seq": { N: String(marks.seq) },
              ":shard": { S: dueShardOf(channel) },
              ":now": { N: String(now) },
            },
          }),
        );
      }
    }
  };
}

/**
 * The simulated clock: 5-minute ticks from the first message, skipping those at which nothing
 * arrives and no channel of either variant is due, until all is ingested and nothing is due.
 * The variants tick one after the other, so that each tick's wall time is its own; their queues
 * are drained together.
 */
async function simulate(
  messages: ChatMessage[],
  replay: Replay,
  ingestAt: (batch: ChatMessage[], now: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  for (let now = Math.ceil(messages[0].ts / TICK_MS) * TICK_MS; ; ) {
    const first = next;
    while (next < messages.length && messages[next].ts <= now) next++;
    if (next > first) await ingestAt(messages.slice(first, next), now);
    const sent: Variant[] = [];
    for (const variant of replay.variants) if (await timedTick(variant, now)) sent.push(variant);
    await Promise.all(sent.map(drain));
    if (++replay.ticks % 500 === 0) {
      console.error(`  tick ${replay.ticks}: ${next} of ${messages.length} messages ingested`);
    }
    const arrival = next < messages.length ? messages[next].ts : Infinity;
    // An arrival by the next tick makes it the next one, whatever is due.
    const due = arrival <= now + TICK_MS ? arrival : await earliestDue(replay.variants);
    if (next === messages.length && due === null) return;
    const target = Math.min(arrival, due ?? Infinity);
    now += Math.max(1, Math.ceil((target - now) / TICK_MS)) * TICK_MS;
  }
}

/** Runs one tick, timed; true when it sent something to the queue. */
async function timedTick(variant: Variant, now: number): Promise<boolean> {
  const sent = variant.sqs.requestCount();
  const started = performance.now();
  await variant.tick(now);
  variant.tickMs += performance.now() - started;
  return variant.sqs.requestCount() > sent;
}

/**
 * Drains the variant's queue. Called only after a tick that sent something: an empty queue needs
 * no drain, and an empty receive takes the SQS emulator some 45 ms.
 */
async function drain(variant: Variant): Promise<void> {
  variant.delivered.push(...(await variant.drain()));
}

async function earliestDue(variants: Variant[]): Promise<number | null> {
  const times = await Promise.all(variants.map((v) => v.earliestDue()));
  const due = times.filter((t): t is number => t !== null);
  return due.length === 0 ? null : Math.min(...due);
}

// ---------------------------------------------------------------------------------------------
// Checks and report

/** Each channel's delivered segments as message-id lists, in delivery order. */
function segmentsByChannel(delivered: SegmentMessageV1[]): Map<string, string[]> {
  const byChannel = new Map<string, string[]>();
  for (const segment of delivered) {
    const list = byChannel.get(segment.channel) ?? [];
    list.push(segment.messageIds.join(","));
    byChannel.set(segment.channel, list);
  }
  return byChannel;
}

/** The first channel whose segments differ between the two, or null when they all agree. */
function firstDifference(a: SegmentMessageV1[], b: SegmentMessageV1[]): string | null {
  const left = segmentsByChannel(a);
  const right = segmentsByChannel(b);
  const channels = new Set([...left.keys(), ...right.keys()]);
  for (const channel of [...channels].sort()) {
    if ((left.get(channel) ?? []).join("\n") !== (right.get(channel) ?? []).join("\n")) {
      return channel;
    }
  }
  return null;
}

/** How many distinct messages were delivered, and how many deliveries there were in all. */
function deliveries(delivered: SegmentMessageV1[]): { distinct: number; total: number } {
  const ids = delivered.flatMap((s) => s.messageIds.map((id) => `${s.channel}\0${id}`));
  return { distinct: new Set(ids).size, total: ids.length };
}

/** Segments that begin within `settle` of their channel's previous one: carved by maxSize. */
function sizeCuts(delivered: SegmentMessageV1[], settle: number): number {
  const lastTs = new Map<string, number>();
  let cuts = 0;
  for (const segment of delivered) {
    const previous = lastTs.get(segment.channel);
    if (previous !== undefined && segment.first.ts - previous <= settle) cuts++;
    lastTs.set(segment.channel, segment.last.ts);
  }
  return cuts;
}

const integer = (n: number) => Math.round(n).toLocaleString("en-US");
const decimal = (n: number, digits = 2) => n.toFixed(digits);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const kb = (bytes: number) => bytes / 1024;

interface Measures {
  itemReads: number;
  messageReads: number;
  maxReads: number;
  kbRead: number;
  readUnits: number;
  sqsPerSegment: number;
  ticksPerSecond: number;
}

/** A variant's measurements per ingested message, per delivered segment, per second. */
function measures(variant: Variant, messages: number, ticks: number): Measures {
  const { dynamodb, sqs } = variant;
  const read = dynamodb.read();
  return {
    itemReads: read.items / messages,
    messageReads: sum([...dynamodb.messageReads.values()]) / messages,
    maxReads: [...dynamodb.messageReads.values()].reduce((a, b) => Math.max(a, b), 0),
    kbRead: kb(read.bytes) / messages,
    readUnits: sum(variant.units.measured.map((m) => m.read)) / messages,
    sqsPerSegment: sqs.requestCount() / Math.max(1, variant.delivered.length),
    ticksPerSecond: ticks / (variant.tickMs / 1000),
  };
}

/** Prints the side-by-side table, the checks, the verdicts, and where units, reads and time went. */
function report(
  scenario: Scenario,
  stream: Stream,
  settings: TickSettings,
  replay: Replay,
  wallMs: number,
): void {
  const n = stream.messages.length;
  const [convoseg, naive] = replay.variants;
  const shown = naive ? [convoseg, naive] : [convoseg];
  const all = shown.map((v) => measures(v, n, replay.ticks));
  const row = (label: string, values: string[], ratio = "") =>
    console.log(
      `${label.padEnd(34)}${values.map((v) => v.padStart(12)).join("")}${ratio.padStart(16)}`,
    );
  const compared = (label: string, key: keyof Measures, format: (n: number) => string) =>
    row(
      label,
      all.map((m) => format(m[key])),
      all.length > 1 ? `${decimal(all[1][key] / all[0][key])}x` : "",
    );

  console.log("");
  row(
    "",
    shown.map((v) => v.name),
    naive ? "naive/convoseg" : "",
  );
  row(
    "messages",
    shown.map(() => integer(n)),
  );
  row(
    "channels",
    shown.map(() => integer(stream.channels)),
  );
  row(
    "ticks",
    shown.map(() => integer(replay.ticks)),
  );
  row(
    "segments",
    shown.map((v) => integer(v.delivered.length)),
  );
  compared("DynamoDB item reads / message", "itemReads", decimal);
  compared("  of them message items", "messageReads", decimal);
  compared("  most reads of one message", "maxReads", integer);
  compared("KB read / message", "kbRead", decimal);
  compared("read units / message", "readUnits", decimal);
  compared("SQS requests / segment", "sqsPerSegment", decimal);
  compared("ticks / s", "ticksPerSecond", (t) => decimal(t, 1));

  console.log("");
  if (naive) {
    const difference = firstDifference(convoseg.delivered, naive.delivered);
    console.log(
      difference === null
        ? "same segments: yes, every channel's delivered message-id lists are identical"
        : `same segments: NO, channel ${difference} differs`,
    );
  }
  const { distinct, total } = deliveries(convoseg.delivered);
  const late = convoseg.delivered.filter((s) => s.late).length;
  console.log(
    `convoseg delivered ${integer(distinct)} of ${integer(n)} messages, ${integer(total - distinct)} more than once; ${late} late segments; ${sizeCuts(convoseg.delivered, settings.settle)} of ${convoseg.delivered.length} segments carved by maxSize`,
  );
  console.log(
    `convoseg reads of each message item: ${decimal(all[0].messageReads)} on average, at most ${all[0].maxReads} (target: at most ${TARGET_READS} over its life) ${all[0].maxReads <= TARGET_READS ? "meets target" : "MISSES target"}`,
  );
  capacityReport(scenario, replay, n);

  console.log("");
  console.log("DynamoDB reads by source, items / message (KB / message):");
  for (const variant of shown)
    console.log(`  ${variant.name}: ${volumes(variant.dynamodb.reads, n)}`);
  console.log("SQS requests by command:");
  for (const variant of shown) {
    const requests = [...variant.sqs.requests].map(([c, k]) => `${c.replace(/Command$/, "")} ${k}`);
    console.log(`  ${variant.name}: ${requests.join(", ")}`);
  }
  const ticksMs = sum(shown.map((v) => v.tickMs));
  console.log(
    `replay wall time ${seconds(wallMs)}: ingestion ${seconds(replay.ingestMs)}, ${shown.map((v) => `${v.name} ticks ${seconds(v.tickMs)}`).join(", ")}, draining and scheduling ${seconds(wallMs - replay.ingestMs - ticksMs)}`,
  );
}

/**
 * The write and read units per message of ingestion and the real tick, by operation and by
 * table and index, beside the floor; and the verdict against the scenario's target.
 */
function capacityReport(scenario: Scenario, replay: Replay, n: number): void {
  const measured = [
    ...replay.ingestionUnits.measured.map((m) => ({ ...m, who: "ingest" })),
    ...replay.variants[0].units.measured.map((m) => ({ ...m, who: "tick" })),
  ];
  const byOperation = new Map<
    string,
    { write: number; read: number; indexes: Map<string, number> }
  >();
  const byTable = new Map<string, { write: number; read: number }>();
  for (const m of measured) {
    const key = `${m.who.padEnd(7)}${m.operation}`;
    const entry = byOperation.get(key) ?? { write: 0, read: 0, indexes: new Map() };
    entry.write += m.write;
    entry.read += m.read;
    if (m.index !== undefined)
      entry.indexes.set(m.index, (entry.indexes.get(m.index) ?? 0) + m.write + m.read);
    byOperation.set(key, entry);
    const table = `${m.operation.split(" ")[1]?.split("/")[0] ?? "?"}${m.index ? `/${m.index}` : ""}`;
    const tableEntry = byTable.get(table) ?? { write: 0, read: 0 };
    tableEntry.write += m.write;
    tableEntry.read += m.read;
    byTable.set(table, tableEntry);
  }
  const per = (units: number) => decimal(units / n);
  console.log("");
  console.log(
    "DynamoDB capacity units per message (ReturnConsumedCapacity; what DynamoDB Local under-reports computed from item sizes):",
  );
  console.log(`  ${"operation".padEnd(44)}${"write".padStart(8)}${"read".padStart(8)}`);
  for (const [key, { write, read, indexes }] of [...byOperation].sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    console.log(
      `  ${key.padEnd(44)}${(write ? per(write) : "").padStart(8)}${(read ? per(read) : "").padStart(8)}`,
    );
    for (const [index, units] of indexes)
      console.log(
        `  ${`    of it index ${index}`.padEnd(44)}${per(units).padStart(write ? 8 : 16)}`,
      );
  }
  const write = sum(measured.map((m) => m.write));
  const read = sum(measured.map((m) => m.read));
  console.log(`  ${"total".padEnd(44)}${per(write).padStart(8)}${per(read).padStart(8)}`);
  console.log(
    `  by table and index: ${[...byTable].map(([table, u]) => `${table} ${per(u.write)} W ${per(u.read)} R`).join(", ")}`,
  );
  const ratio = write / replay.floor;
  console.log(
    `floor: ${per(replay.floor)} write units per message (one conditional put of each message, its byPosition entry and its byAuthor entry)`,
  );
  console.log(
    `write units / floor: ${decimal(ratio)}x (target at most ${decimal(scenario.target)}x) ${ratio <= scenario.target ? "meets target" : "MISSES target"}`,
  );
}

/** "source items (KB), ..." per message, leaving out the `omit` key. */
function volumes(byKey: Map<string, Volume>, messages: number, omit?: string): string {
  return [...byKey]
    .filter(([key]) => key !== omit)
    .map(
      ([key, { items, bytes }]) =>
        `${key} ${decimal(items / messages)} (${decimal(kb(bytes) / messages)})`,
    )
    .join(", ");
}

// ---------------------------------------------------------------------------------------------

interface Scenario {
  name: "irc" | "sample";
  stream: Stream;
  settings: TickSettings;
  /** Write units per message, as a multiple of the floor, at most. */
  target: number;
  /** Also run the naive tick, for read amplification. */
  naive: boolean;
}

// The AWS SDK warns at every client it builds that Node 20 support ends; a local benchmark.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const options = parseOptions();
const pipelineSettings = (maxSize: number): TickSettings => ({
  maxSize,
  settle: DEFAULT_SETTLE_MS,
  minItems: 1,
  grace: 0,
  maxArrivalsPerChannel: 5000,
  leaseMs: 15 * MINUTE,
  holdTimeoutMs: 5 * MINUTE,
  channelConcurrency: 8,
  conversations: options.conversations,
});
const sample = sampleChat({ settle: DEFAULT_SETTLE_MS, perChannel: 150 }).sort(compareRefs);
const scenarios: Scenario[] = [
  {
    name: "irc",
    stream: loadStream(options),
    settings: pipelineSettings(options.maxSize),
    target: 1.5,
    naive: true,
  },
  {
    name: "sample",
    stream: {
      messages: sample,
      channels: channelCount(sample),
      source: "the default sample of npm start -- run",
    },
    // What `npm start -- run` runs with: the segmenter's defaults.
    settings: pipelineSettings(DEFAULT_MAX_SIZE),
    target: 2.5,
    naive: false,
  },
].filter((scenario) => options.only === undefined || scenario.name === options.only) as Scenario[];

const emulators = await startEmulators({ ignoreEnvironment: true });
try {
  for (const scenario of scenarios) {
    const { stream, settings } = scenario;
    console.log(
      `\nPipeline replay (${scenario.name}): ${integer(stream.messages.length)} messages (${stream.source}) on ${integer(stream.channels)} channels; 5-minute ticks; maxSize ${settings.maxSize}, settle 24h, minItems 1, grace 0, conversations ${settings.conversations}`,
    );
    const started = performance.now();
    const replay = await runReplay(stream.messages, settings, emulators, scenario.naive);
    report(scenario, stream, settings, replay, performance.now() - started);
  }
} finally {
  await emulators.stop();
}
