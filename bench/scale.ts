/**
 * How the segmentation tick's throughput grows when it fans out to more workers: the same chat
 * on N channels ticked by 1, 2 and 4 workers (`LocalPipeline` with `workers`, each worker running
 * its share of the due index as the worker function does), one worker count after the other in
 * one run, on DynamoDB Local and the SQS emulator, which it starts itself and stops at the end.
 * For the first worker count (one worker by default) it also prints what a channel-tick costs:
 * AWS calls and items by operation, request and response body bytes (as the deployed tick sends
 * and receives them: without the consumed capacity the meter asks for), and DynamoDB read and
 * write units (`bench/capacity.ts`), at the deployed settings (`readSegmentConfig`'s defaults).
 *
 *   npm run bench:scale                           5,000 channels, workers 1, 2 and 4
 *   npm run bench:scale -- --channels 500         fewer channels (a quicker run)
 *   npm run bench:scale -- --messages 5           messages per channel (default 3)
 *   npm run bench:scale -- --workers 1,2,4,8      the worker counts compared
 *   npm run bench:scale -- --latency-ms 0         the emulators' own speed (default 50 ms)
 *   npm run bench:scale -- --json FILE            also write the results as JSON
 *   npm run bench:scale -- --help                 these options
 *
 * Each worker count gets fresh tables and queue, and the same messages: `--messages` per channel,
 * a minute apart, ingested (untimed) through the real ingestion path. Two rounds are timed, so
 * that both kinds of channel-tick are measured. "open": a tick 5 minutes after the first
 * message, while every conversation is open, so each channel reads its arrivals and records its
 * state. "settle": a tick once every conversation has settled, so each channel delivers one
 * segment to SQS. A round ticks at its time until every channel is drained: none is due any more
 * and, after "settle", every channel's segment has arrived. The queue is drained (untimed) after
 * each tick; a round delivers exactly one segment per channel after "settle", none after "open".
 * Throughput is the channel-ticks of all the round's ticks over their time: under load a tick
 * may leave channels due, or their segments may arrive late, and the round goes on until they
 * are done rather than assume one tick did them all.
 *
 * Every AWS call of a timed tick waits `--latency-ms` before it is sent, a model of the network
 * round trip from Lambda, where each worker has its own CPU and mostly waits on DynamoDB and SQS.
 * Here the workers share one Node process, and two cores with DynamoDB Local, whose work runs on
 * one SQLite thread: on the 2-core machine this was written on, the SDK and the emulators top
 * out at about 100 channel-ticks a second (some 450 calls), whatever the worker count; with
 * `--latency-ms 0` or 5 (DynamoDB's own round trip) every worker count measures that ceiling, not
 * the tick (1.04x to 1.17x). The default, 50 ms, makes one worker wait on round trips as a worker
 * in Lambda does, and keeps two workers under that ceiling (four reach it), so the ratios show
 * what fanning out adds. A worker's throughput in Lambda is projected in docs/scaling.md from the
 * calls per channel-tick and the Node CPU per channel-tick printed here (measured in "open",
 * which has no SQS calls: the SQS emulator runs in this process).
 */
import { writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { ChatMessage } from "convoseg/messages";
import {
  MAX_WORKERS,
  type PipelineLogger,
  readSegmentConfig,
  type TickSettings,
} from "convoseg/pipeline";
import type { SegmentMessageV1 } from "convoseg/pipeline/contract";
import { DUE_SHARDS } from "convoseg/pipeline/schema";
import { type Emulators, startEmulators } from "../local/emulators.js";
import { LocalPipeline } from "../local/pipeline.js";
import { random } from "../local/sample.js";
import { benchArgs, usageError } from "./args.js";
import { CapacityMeter } from "./capacity.js";

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 0, 6);
/** Messages per ingest call, and calls in flight: ingestion is not timed, only kept short. */
const INGEST_BATCH = 300;
const INGEST_PARALLEL = 4;
/** How long a round waits for segments still missing once no channel is due, before it fails. */
const MISSING_WAITS = 50;
const MISSING_WAIT_MS = 200;

const USAGE = `
npm run bench:scale [-- options]

The segmentation tick's throughput with 1, 2 and 4 workers on DynamoDB Local and the SQS
emulator (started and stopped by the benchmark), each round ticked until every channel is
drained; and one worker's calls, items, bytes and units per channel-tick (about 13 minutes).

  --channels N      channels, each with its own conversation (default 5000)
  --messages N      messages per channel, a minute apart (default 3)
  --workers LIST    the worker counts compared, comma-separated (default 1,2,4)
  --latency-ms MS   modelled network round trip before every timed AWS call (default 50)
  --json FILE       also write the results as JSON
  --help            this text
`;

interface Options {
  channels: number;
  messages: number;
  workers: number[];
  latencyMs: number;
  json?: string;
}

function parseOptions(): Options {
  const values = benchArgs(USAGE, {
    channels: { type: "string", default: "5000" },
    messages: { type: "string", default: "3" },
    workers: { type: "string", default: "1,2,4" },
    "latency-ms": { type: "string", default: "50" },
    json: { type: "string" },
  });
  const count = (name: string, text: string, max = Number.MAX_SAFE_INTEGER) => {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < 1 || n > max) {
      usageError(USAGE, `--${name} must be an integer from 1 to ${max} (got ${text})`);
    }
    return n;
  };
  const latencyMs = Number(values["latency-ms"]);
  if (!Number.isFinite(latencyMs) || latencyMs < 0 || values["latency-ms"].trim() === "") {
    usageError(USAGE, "--latency-ms must be a number of milliseconds, 0 or more");
  }
  return {
    channels: count("channels", values.channels),
    messages: count("messages", values.messages),
    workers: values.workers.split(",").map((w) => count("workers", w.trim(), MAX_WORKERS)),
    latencyMs,
    json: values.json,
  };
}

// ---------------------------------------------------------------------------------------------
// Input

/** `perChannel` messages on each of `channels` channels, a minute apart from T0; seeded. */
function generatedChat(channels: number, perChannel: number): ChatMessage[] {
  const next = random(7);
  return Array.from({ length: channels }, (_, k) => {
    const channel = `ch-${String(k + 1).padStart(5, "0")}`;
    return Array.from({ length: perChannel }, (_, i) => ({
      id: `${channel}-${i}`,
      ts: T0 + i * MINUTE,
      channel,
      user: `user${Math.floor(next() * 20)}`,
      text: `message ${i} ${"lorem ipsum ".repeat(Math.floor(next() * 8))}`.trim(),
    }));
  }).flat();
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface Calls {
  calls: number;
  /** Items read (reads), written (writes), or messages sent (SQS). */
  items: number;
}

type Handler = (args: {
  input: Record<string, unknown>;
  request?: unknown;
}) => Promise<{ output?: Record<string, unknown>; response?: unknown }>;

/** What the benchmark needs of an SDK client's middleware stack, whichever client it is. */
interface MiddlewareStack {
  add(
    middleware: (next: Handler, context: Context) => Handler,
    options: { step: "initialize" | "deserialize"; name: string; priority?: "low" },
  ): void;
}

const READS = new Set(["QueryCommand", "GetItemCommand", "BatchGetItemCommand", "ScanCommand"]);
const SINGLE_WRITES = new Set([
  "PutItemCommand",
  "UpdateItemCommand",
  "DeleteItemCommand",
  "SendMessageCommand",
]);

/** The items a call read, wrote or sent, from its input and output. */
function itemsOf(
  command: string,
  input: Record<string, unknown>,
  output: Record<string, unknown> | undefined,
): number {
  if (READS.has(command)) {
    if (output?.Responses) {
      return Object.values(output.Responses as Record<string, unknown[]>).flat().length;
    }
    return (output?.Items as unknown[] | undefined)?.length ?? (output?.Item ? 1 : 0);
  }
  if (SINGLE_WRITES.has(command)) return 1;
  if (command === "TransactWriteItemsCommand") {
    // A condition check reads an item and writes nothing.
    const actions = (input.TransactItems ?? []) as Record<string, unknown>[];
    return actions.filter((action) => action.ConditionCheck === undefined).length;
  }
  if (command === "BatchWriteItemCommand") {
    return Object.values(input.RequestItems as Record<string, unknown[]>).flat().length;
  }
  if (command === "SendMessageBatchCommand") return (input.Entries as unknown[]).length;
  return 0;
}

/** What the capacity meter adds to a request when absent; the deployed tick sends neither. */
const METER_FIELDS = ["ReturnConsumedCapacity", "ReturnValuesOnConditionCheckFailure"];
/** Where a call's context carries the fields the meter added, from the call to its attempts. */
const ADDED = Symbol("meterFields");

type Context = { commandName?: string; [ADDED]?: string[] };

/** One attempt's bodies, kept as they were so that sizing them costs the timed ticks nothing. */
interface Exchange {
  request: Uint8Array;
  response: Buffer;
  /** The fields the meter added, with the values sent. */
  added: Record<string, unknown>;
}

/**
 * The bytes of an exchange as the deployed tick would send and receive them: without what the
 * meter added to the request, nor what that added to the response (the consumed capacity; the
 * item of a failed condition). The SDK writes compact JSON and a request's first field is never
 * one of these, so each added field cost exactly `,"name":value`.
 */
function deployedBytes({ request, response, added }: Exchange): { sent: number; received: number } {
  const fields = Object.entries(added);
  const sent = fields.reduce(
    (bytes, [name, value]) =>
      bytes - Buffer.byteLength(`,${JSON.stringify(name)}:${JSON.stringify(value)}`),
    request.byteLength,
  );
  if (fields.length === 0 || response.byteLength === 0) {
    return { sent, received: response.byteLength };
  }
  const body = JSON.parse(response.toString("utf8")) as Record<string, unknown>;
  if ("ReturnConsumedCapacity" in added) delete body.ConsumedCapacity;
  const failed = String(body.__type ?? "").endsWith("ConditionalCheckFailedException");
  if ("ReturnValuesOnConditionCheckFailure" in added && failed) delete body.Item;
  // Only the removed parts hold numbers that JSON.stringify writes otherwise than DynamoDB.
  return { sent, received: Buffer.byteLength(JSON.stringify(body)) };
}

/**
 * The calls, items and bodies of a pipeline's clients while `active`, and the modelled latency.
 * Ingestion, draining and `earliestDue` use the same clients but run inactive: neither counted
 * nor delayed. Attach it before the capacity meter, so that it sees a request's own fields.
 */
class Wire {
  active = false;
  /** By "service operation", e.g. "DynamoDB Query". */
  readonly calls = new Map<string, Calls>();
  readonly exchanges: Exchange[] = [];

  constructor(private readonly latencyMs: number) {}

  attach(client: DynamoDBClient | SQSClient, service: string): this {
    const stack = client.middlewareStack as unknown as MiddlewareStack;
    stack.add(
      (next, context) => async (args) => {
        if (!this.active) return next(args);
        const command = context.commandName ?? "unknown";
        context[ADDED] = METER_FIELDS.filter((name) => args.input[name] === undefined);
        let output: Record<string, unknown> | undefined;
        try {
          const result = await next(args);
          output = result.output;
          return result;
        } finally {
          // A failed call (a lost condition) costs a round trip too.
          const key = `${service} ${command.replace(/Command$/, "")}`;
          const entry = this.calls.get(key) ?? { calls: 0, items: 0 };
          entry.calls++;
          entry.items += itemsOf(command, args.input, output);
          this.calls.set(key, entry);
        }
      },
      { step: "initialize", name: "scaleCalls" },
    );
    // Last before the HTTP handler: once per attempt, with the bodies as sent and received.
    stack.add(
      (next, context) => async (args) => {
        if (!this.active) return next(args);
        if (this.latencyMs > 0) await sleep(this.latencyMs);
        const result = await next(args);
        const response = result.response as { body?: AsyncIterable<Uint8Array> | Uint8Array };
        const chunks: Uint8Array[] = [];
        if (response.body instanceof Uint8Array) chunks.push(response.body);
        else if (response.body !== undefined)
          for await (const chunk of response.body) chunks.push(chunk);
        // The stream is read: the deserializer takes the bytes instead, as a view of their own
        // (it changes the prototype of what it is handed).
        const received = Buffer.concat(chunks);
        response.body = new Uint8Array(received.buffer, received.byteOffset, received.byteLength);
        // The JSON protocols' serializer writes a Uint8Array.
        const body = (args.request as { body?: unknown }).body;
        const added = (context[ADDED] ?? []).filter((name) => args.input[name] !== undefined);
        this.exchanges.push({
          request: body instanceof Uint8Array ? body : Buffer.from(String(body ?? "")),
          response: received,
          added: Object.fromEntries(added.map((name) => [name, args.input[name]])),
        });
        return result;
      },
      { step: "deserialize", name: "scaleWire", priority: "low" },
    );
    return this;
  }

  /** Forgets what it saw. */
  reset(): void {
    this.calls.clear();
    this.exchanges.length = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// The runs

/**
 * None of these happen in this benchmark unless something is broken (a failed channel, a busy
 * share, a broken hold): a run that meets one would measure something else, so it stops.
 */
const failOnProblem: PipelineLogger = {
  info() {},
  warn(message, attributes) {
    throw new Error(`${message}: ${JSON.stringify(attributes)}`);
  },
  error(message, attributes) {
    throw new Error(`${message}: ${JSON.stringify(attributes)}`);
  },
};

const ROUNDS = ["open", "settle"] as const;
type RoundName = (typeof ROUNDS)[number];

interface Round {
  channelTicks: number;
  ticks: number;
  ms: number;
  /** This process's CPU time (user and system) during the ticks. */
  cpuMs: number;
  calls: Record<string, Calls>;
  bytesSent: number;
  bytesReceived: number;
  readUnits: number;
  writeUnits: number;
}

interface Run {
  workers: number;
  dueShards: number;
  rounds: Record<RoundName, Round>;
}

interface Meters {
  dynamodb: Wire;
  sqs: Wire;
  units: CapacityMeter;
}

/** Fresh tables and queue for `workers` workers, the chat ingested, both rounds timed. */
async function runWorkers(
  workers: number,
  chat: ChatMessage[],
  settings: TickSettings,
  options: Options,
  emulators: Emulators,
): Promise<Run> {
  const dynamodb = emulators.dynamodb();
  const sqs = emulators.sqs();
  const meters: Meters = {
    dynamodb: new Wire(options.latencyMs).attach(dynamodb, "DynamoDB"),
    sqs: new Wire(options.latencyMs).attach(sqs, "SQS"),
    units: new CapacityMeter((command) => command).attach(dynamodb),
  };
  // Each worker owns at least one shard of the due index.
  const dueShards = Math.max(DUE_SHARDS, workers);
  const pipeline = await LocalPipeline.create({
    dynamodb,
    sqs,
    settings,
    workers,
    dueShards,
    prefix: "scale",
    logger: failOnProblem,
  });

  const last = chat.reduce((latest, m) => Math.max(latest, m.ts), T0);
  await progress(`ingest ${workers} workers: ${options.channels} channels`, () =>
    ingestAll(pipeline, chat, last),
  );

  // With more messages than fit before T0 + 5 minutes, "open" waits for the last of them (and
  // its grace); "settle" comes 10 minutes after the last conversation has settled.
  const at: Record<RoundName, number> = {
    open: Math.max(T0 + 5 * MINUTE, last + settings.grace + MINUTE),
    settle: last + settings.settle + settings.grace + 10 * MINUTE,
  };
  const rounds = {} as Record<RoundName, Round>;
  for (const name of ROUNDS) {
    const expected = name === "settle" ? options.channels : 0;
    const { round, segments } = await progress(`tick ${workers} workers: ${name}`, () =>
      timedRound(pipeline, meters, at[name], expected),
    );
    checkSegments(name, segments, options);
    rounds[name] = round;
  }
  return { workers, dueShards, rounds };
}

/** Runs a long phase, its label and then its duration on stderr. */
async function progress<T>(label: string, run: () => Promise<T>): Promise<T> {
  process.stderr.write(`${label} ...`);
  const started = performance.now();
  try {
    return await run();
  } finally {
    process.stderr.write(` ${decimal((performance.now() - started) / 1000, 1)} s\n`);
  }
}

/** Ingests in batches, a few at once; every message must be stored. */
async function ingestAll(pipeline: LocalPipeline, chat: ChatMessage[], now: number) {
  const batches: ChatMessage[][] = [];
  for (let i = 0; i < chat.length; i += INGEST_BATCH) batches.push(chat.slice(i, i + INGEST_BATCH));
  let stored = 0;
  const worker = async () => {
    for (let batch = batches.shift(); batch; batch = batches.shift()) {
      const result = await pipeline.ingest(batch, now);
      const problem = result.rejected[0] ?? result.failed[0] ?? result.conflicts[0];
      if (problem) throw new Error(`ingestion failed: ${JSON.stringify(problem)}`);
      stored += result.stored.length;
    }
  };
  await Promise.all(Array.from({ length: INGEST_PARALLEL }, worker));
  if (stored !== chat.length) throw new Error(`ingested ${stored} of ${chat.length} messages`);
}

/**
 * Ticks at `now` until every channel is drained: none is due by then, and the segments of
 * `channels` channels have arrived (the queue is drained after each tick). Only the ticks are
 * timed and measured. Once nothing is due, segments still missing are waited for a while: a
 * round that gets no further fails, saying how far it got.
 */
async function timedRound(
  pipeline: LocalPipeline,
  meters: Meters,
  now: number,
  channels: number,
): Promise<{ round: Round; segments: SegmentMessageV1[] }> {
  const round: Round = {
    channelTicks: 0,
    ticks: 0,
    ms: 0,
    cpuMs: 0,
    calls: {},
    bytesSent: 0,
    bytesReceived: 0,
    readUnits: 0,
    writeUnits: 0,
  };
  const segments: SegmentMessageV1[] = [];
  const delivered = new Set<string>();
  const wires = [meters.dynamodb, meters.sqs];
  for (const wire of wires) wire.reset();
  for (let waits = 0; ; ) {
    const due = await pipeline.channels.earliestDue();
    if (due !== null && due <= now) {
      await timedTick(pipeline, meters, now, round);
      waits = 0;
    } else if (delivered.size >= channels) {
      break;
    } else if (++waits > MISSING_WAITS) {
      throw new Error(
        `no channel is due, and the segments of ${channels - delivered.size} of ${channels} channels have not arrived after ${round.ticks} ticks and ${(MISSING_WAITS * MISSING_WAIT_MS) / 1000} s`,
      );
    } else {
      await sleep(MISSING_WAIT_MS);
    }
    const received = await pipeline.drain();
    if (received.length > 0) waits = 0;
    segments.push(...received);
    for (const segment of received) delivered.add(segment.channel);
  }
  for (const wire of wires) {
    for (const [key, calls] of wire.calls) round.calls[key] = calls;
    for (const exchange of wire.exchanges) {
      const { sent, received } = deployedBytes(exchange);
      round.bytesSent += sent;
      round.bytesReceived += received;
    }
  }
  return { round, segments };
}

/** One tick at `now`, timed and measured into `round`. */
async function timedTick(
  pipeline: LocalPipeline,
  meters: Meters,
  now: number,
  round: Round,
): Promise<void> {
  const wires = [meters.dynamodb, meters.sqs];
  // The meter sees every DynamoDB call; only the tick's are kept.
  meters.units.measured.length = 0;
  for (const wire of wires) wire.active = true;
  const started = performance.now();
  const cpu = process.cpuUsage();
  try {
    const summary = await pipeline.tick(now);
    round.channelTicks += summary.channels;
  } finally {
    round.ms += performance.now() - started;
    const used = process.cpuUsage(cpu);
    round.cpuMs += (used.user + used.system) / 1000;
    for (const wire of wires) wire.active = false;
  }
  round.ticks++;
  for (const m of meters.units.measured) {
    round.readUnits += m.read;
    round.writeUnits += m.write;
  }
}

/** After "open" nothing is delivered; after "settle" each channel's whole conversation, once. */
function checkSegments(
  round: RoundName,
  segments: { channel: string; messageIds: string[] }[],
  options: Options,
): void {
  const expected = round === "open" ? 0 : options.channels;
  const channels = new Set(segments.map((s) => s.channel)).size;
  const whole = segments.every((s) => s.messageIds.length === options.messages);
  if (segments.length !== expected || channels !== expected || !whole) {
    throw new Error(
      `round ${round}: ${segments.length} segments on ${channels} channels delivered, expected ${expected} of ${options.messages} messages each`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const integer = (n: number) => Math.round(n).toLocaleString("en-US");
const decimal = (n: number, digits = 2) => n.toFixed(digits);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** The two rounds as one. */
function both(run: Run): Round {
  const [open, settle] = ROUNDS.map((name) => run.rounds[name]);
  const calls: Record<string, Calls> = {};
  for (const round of [open, settle]) {
    for (const [key, c] of Object.entries(round.calls)) {
      const entry = calls[key] ?? { calls: 0, items: 0 };
      calls[key] = { calls: entry.calls + c.calls, items: entry.items + c.items };
    }
  }
  const total = (key: "channelTicks" | "ticks" | "ms" | "cpuMs" | "bytesSent" | "bytesReceived") =>
    open[key] + settle[key];
  return {
    channelTicks: total("channelTicks"),
    ticks: total("ticks"),
    ms: total("ms"),
    cpuMs: total("cpuMs"),
    calls,
    bytesSent: total("bytesSent"),
    bytesReceived: total("bytesReceived"),
    readUnits: open.readUnits + settle.readUnits,
    writeUnits: open.writeUnits + settle.writeUnits,
  };
}

const perSecond = (round: Round) => round.channelTicks / (round.ms / 1000);

function scaleTable(runs: Run[]): void {
  const base = perSecond(both(runs[0]));
  const widths = [8, 7, 15, 9, 17, 12, 12, 10];
  const row = (cells: string[]) =>
    console.log(cells.map((cell, i) => cell.padStart(widths[i])).join(""));
  row([
    "workers",
    "shards",
    "channel-ticks",
    "seconds",
    "channel-ticks/s",
    "open /s",
    "settle /s",
    `vs ${runs[0].workers}w`,
  ]);
  for (const run of runs) {
    const total = both(run);
    row([
      String(run.workers),
      String(run.dueShards),
      integer(total.channelTicks),
      decimal(total.ms / 1000, 1),
      decimal(perSecond(total), 1),
      decimal(perSecond(run.rounds.open), 1),
      decimal(perSecond(run.rounds.settle), 1),
      `${decimal(perSecond(total) / base)}×`,
    ]);
  }
}

/** Per channel-tick of `run`: calls and items by operation, bytes and units, by round. */
function costTable(run: Run, settings: TickSettings): void {
  const columns: [string, Round][] = [
    ...ROUNDS.map((name): [string, Round] => [name, run.rounds[name]]),
    ["both", both(run)],
  ];
  const operations = [...new Set(columns.flatMap(([, r]) => Object.keys(r.calls)))].sort();
  const label = 26;
  const cell = 9;
  const line = (name: string, cells: string[]) =>
    console.log(`${name.padEnd(label)}${cells.map((c) => c.padStart(cell)).join("")}`);
  // One value per round, right-aligned under the round's two columns.
  const single = (name: string, value: (round: Round) => string) =>
    line(
      name,
      columns.flatMap(([, round]) => ["", value(round)]),
    );
  console.log(
    `\n${run.workers} worker${run.workers === 1 ? "" : "s"} at channelConcurrency ${settings.channelConcurrency}, per channel-tick (timed ticks only):`,
  );
  console.log(`${"".padEnd(label)}${columns.map(([name]) => name.padStart(2 * cell)).join("")}`);
  line(
    "",
    columns.flatMap(() => ["calls", "items"]),
  );
  for (const operation of operations) {
    line(
      operation,
      columns.flatMap(([, round]) => {
        const c = round.calls[operation] ?? { calls: 0, items: 0 };
        return [decimal(c.calls / round.channelTicks), decimal(c.items / round.channelTicks)];
      }),
    );
  }
  line(
    "all calls",
    columns.flatMap(([, round]) => {
      const calls = Object.values(round.calls);
      return [
        decimal(sum(calls.map((c) => c.calls)) / round.channelTicks),
        decimal(sum(calls.map((c) => c.items)) / round.channelTicks),
      ];
    }),
  );
  single("request body bytes", (r) => integer(r.bytesSent / r.channelTicks));
  single("response body bytes", (r) => integer(r.bytesReceived / r.channelTicks));
  single("DynamoDB read units", (r) => decimal(r.readUnits / r.channelTicks));
  single("DynamoDB write units", (r) => decimal(r.writeUnits / r.channelTicks));
  single("Node CPU ms", (r) => decimal(r.cpuMs / r.channelTicks));
  single("channel-ticks", (r) => integer(r.channelTicks));
  single("ticks", (r) => integer(r.ticks));
  single("channel-ticks / s", (r) => decimal(perSecond(r), 1));
}

// ---------------------------------------------------------------------------------------------

// The AWS SDK warns at every client it builds that Node 20 support ends; a local benchmark.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const options = parseOptions();
// The deployed defaults; the names are placeholders, LocalPipeline makes its own tables.
const { settings } = readSegmentConfig({
  MESSAGES_TABLE: "m",
  CHANNELS_TABLE: "c",
  SEGMENT_QUEUE_URL: "q",
});
const chat = generatedChat(options.channels, options.messages);
// The load when the run starts: other processes on the machine take CPU from the emulators.
const machine = { cores: availableParallelism(), node: process.version, load: loadavg()[0] };

console.log(
  `Tick scale-out: ${integer(options.channels)} channels × ${options.messages} messages, workers ${options.workers.join(", ")}, on DynamoDB Local and the SQS emulator`,
);
console.log(
  `machine: ${machine.cores} cores, Node ${machine.node}, load average ${decimal(machine.load)} at start; modelled network latency ${options.latencyMs} ms per AWS call`,
);
console.log(
  `settings (deployed defaults): channelConcurrency ${settings.channelConcurrency} per worker, maxSize ${settings.maxSize}, settle ${settings.settle / 3_600_000}h, grace ${settings.grace / MINUTE}m; due shards max(${DUE_SHARDS}, workers)`,
);

const emulators = await startEmulators({ ignoreEnvironment: true });
const runs: Run[] = [];
try {
  for (const workers of options.workers) {
    runs.push(await runWorkers(workers, chat, settings, options, emulators));
  }
} finally {
  await emulators.stop();
}

console.log("");
scaleTable(runs);
costTable(runs[0], settings);
if (options.json !== undefined) {
  writeFileSync(options.json, `${JSON.stringify({ options, machine, settings, runs }, null, 2)}\n`);
}
