/**
 * `npm run bench:erase`: erasing one person on DynamoDB Local, measured. A person with 10,000
 * messages over 100 channels among 200,000 messages (defaults), their conversations extracted;
 * the erasure's requests and capacity units (from `ReturnConsumedCapacity`, corrected as in
 * `bench/capacity.ts`) per erased message, by operation, beside the floor (the deletions' own
 * units plus the derived items' writes), and the wall time; then the same person in a table a
 * quarter the size, to show that the cost follows their messages, not the table.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { itemSize } from "convoseg/dynamodb";
import { dynamoDbErasure, eraseUser } from "convoseg/erasure";
import { Analyzer, type LLM } from "convoseg/extraction";
import { textMessage } from "convoseg/history";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import { authorEntry, messageItem } from "convoseg/history/schema";
import { createResultsTable, DynamoDbResultStore, onTimeEnvelope } from "convoseg/knowledge/store";
import { promptVersionOf, SegmentExtractor } from "convoseg/knowledge/write";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { startEmulators } from "../local/emulators.js";
import { benchArgs, usageError } from "./args.js";
import { CapacityMeter, writeUnits } from "./capacity.js";

const USAGE = `
npm run bench:erase [-- options]

Erases one person on DynamoDB Local and measures it: requests and capacity units per erased
message, by operation, against the floor (deleting their messages alone, plus the derived items
they touch), and the wall time; then the same person among a quarter of the messages.

  --messages N        messages in the table (default 200000)
  --user-messages N   the person's messages (default 10000)
  --channels N        channels, the person in every one (default 100)
  --json              the numbers as one JSON object
  --help              this text
`;

const values = benchArgs(USAGE, {
  messages: { type: "string", default: "200000" },
  "user-messages": { type: "string", default: "10000" },
  channels: { type: "string", default: "100" },
  json: { type: "boolean", default: false },
});
const count = (name: string, text: string) => {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) usageError(USAGE, `--${name} must be a positive integer`);
  return n;
};
const options = {
  messages: count("messages", values.messages),
  userMessages: count("user-messages", values["user-messages"]),
  channels: count("channels", values.channels),
};
if (options.userMessages * 5 > options.messages) {
  usageError(USAGE, "--user-messages must be at most a fifth of --messages");
}

const SEGMENT = 20;
/** The person's messages per segment they are in: a conversation of theirs. */
const THEIRS_PER_SEGMENT = 4;
const USER = "erase-me";
const T0 = Date.UTC(2026, 0, 5);
const ANALYSIS = {
  route: "sliding",
  windowSize: SEGMENT,
  overlap: 0,
  prefixStep: 5,
  maxWindows: 8,
} as const;

/** A model in process: two topics per window, the first over all of it, the second its end. */
const model: LLM = {
  async chatJSON(messages) {
    const prompt = messages.find((m) => m.role === "user")?.content ?? "";
    const turns = [...prompt.matchAll(/^Turn (\d+) /gm)].length;
    const topic = /topic(\d+)/.exec(prompt)?.[1] ?? "0";
    return {
      candidates: [
        {
          topic: `topic ${topic}`,
          reason: "discussed",
          confidence: 0.9,
          tags: [],
          turn_range: [0, turns - 1],
          subjective: false,
        },
        {
          topic: `follow-up ${topic}`,
          reason: "asked again",
          confidence: 0.7,
          tags: [],
          turn_range: [turns - 3, turns - 1],
          subjective: false,
        },
      ],
    };
  },
};

interface Scenario {
  messages: number;
  label: string;
}

interface Measure {
  label: string;
  tableMessages: number;
  erased: number;
  seconds: number;
  requests: number;
  read: number;
  write: number;
  floor: number;
  derivedWrites: number;
  byOperation: Record<string, { requests: number; read: number; write: number }>;
}

async function run(dynamodb: () => DynamoDBClient, scenario: Scenario): Promise<Measure> {
  const setup = dynamodb();
  const suffix = `${scenario.label}-${Date.now().toString(36)}`;
  const messagesTable = `bench-erase-messages-${suffix}`;
  const resultsTable = `bench-erase-results-${suffix}`;
  const channelsTable = `bench-erase-channels-${suffix}`;
  await createMessagesTable(setup, messagesTable);
  await createResultsTable(setup, resultsTable);
  await createChannelsTable(setup, channelsTable);
  const history = new DynamoDbStore({ client: setup, tableName: messagesTable, concurrency: 32 });
  const results = new DynamoDbResultStore({ client: setup, tableName: resultsTable });
  const extractor = new SegmentExtractor({
    store: results,
    extractor: new Analyzer(model, { ...ANALYSIS, maxConcurrency: 1 }),
    model: "bench",
    promptVersion: promptVersionOf(ANALYSIS),
    now: () => T0,
    owner: () => "bench",
  });
  const perChannel = Math.floor(scenario.messages / options.channels);
  const theirsPerChannel = Math.floor(options.userMessages / options.channels);
  let floor = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.channels }, async (_, c) => {
      const channel = `#bench${c}`;
      let theirs = 0;
      for (let s = 0; s * SEGMENT < perChannel; s++) {
        const messages = Array.from(
          { length: Math.min(SEGMENT, perChannel - s * SEGMENT) },
          (_, i) => {
            const mine = theirs < theirsPerChannel && i % (SEGMENT / THEIRS_PER_SEGMENT) === 1;
            if (mine) theirs++;
            const id = `${c}-${s}-${i}`;
            const ts = T0 + (s * SEGMENT + i) * 30_000;
            const author = mine ? USER : `user${(c * 7 + s * 3 + i) % 500}`;
            return {
              id,
              ts,
              author,
              text: `message ${id} on topic${s % 40} by ${author}: ${"words ".repeat(8)}`,
            };
          },
        );
        await history.write(
          channel,
          messages.map((m) =>
            textMessage("user", m.text, { id: m.id, ts: m.ts, author: m.author }),
          ),
        );
        for (const m of messages) {
          if (m.author !== USER) continue;
          const item = messageItem(
            channel,
            textMessage("user", m.text, { id: m.id, ts: m.ts, author: m.author }),
            1n,
          );
          // A deletion rewrites the item (its units are the larger of before and after) and removes its byAuthor entry.
          floor +=
            writeUnits(itemSize(item as unknown as Record<string, unknown>)) +
            writeUnits(itemSize(authorEntry(item) ?? {}));
        }
        // Their conversations are extracted, and as many of the others'.
        const holdsTheirs = messages.some((m) => m.author === USER);
        if (holdsTheirs || s < 2 * Math.ceil(theirsPerChannel / THEIRS_PER_SEGMENT)) {
          await extractor.extract(onTimeEnvelope(`seg-${c}-${s}`, channel, messages), messages);
        }
      }
    }),
  );
  const loadSeconds = (performance.now() - started) / 1000;
  const measured = dynamodb();
  const meter = new CapacityMeter((command, input) => {
    const table = String(
      input.TableName ?? Object.keys((input.RequestItems as object) ?? {})[0] ?? "",
    );
    const role = table.startsWith("bench-erase-messages")
      ? "messages"
      : table.startsWith("bench-erase-channels")
        ? "channels"
        : "results";
    const index = input.IndexName ? ` index ${String(input.IndexName)}` : "";
    return `${command.replace("Command", "")} ${role}${index}`;
  }).attach(measured);
  let requests = 0;
  const perOperation = new Map<string, number>();
  measured.middlewareStack.add(
    (next, context) => async (args) => {
      requests++;
      const name = String(context.commandName);
      perOperation.set(name, (perOperation.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: "initialize", name: "requestCounter" },
  );
  const t0 = performance.now();
  const outcome = await eraseUser(
    dynamoDbErasure({
      client: measured,
      messagesTable,
      resultsTable,
      channelsTable,
      auditSecret: "bench-audit-secret-0123456789",
    }),
    {
      user: USER,
      allChannels: true,
      requestedBy: "bench",
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  const byOperation: Measure["byOperation"] = {};
  for (const m of meter.measured) {
    byOperation[m.operation] ??= { requests: 0, read: 0, write: 0 };
    const entry = byOperation[m.operation];
    entry.read += m.read;
    entry.write += m.write;
  }
  for (const [operation, entry] of Object.entries(byOperation)) {
    entry.requests = meter.measured.filter(
      (m) => m.operation === operation && m.index === undefined,
    ).length;
  }
  const derivedWrites = meter.measured
    .filter(
      (m) =>
        m.operation.includes(" results") &&
        !m.operation.startsWith("Query") &&
        !m.operation.startsWith("Get"),
    )
    .reduce((sum, m) => sum + m.write, 0);
  const total = (key: "read" | "write") => meter.measured.reduce((sum, m) => sum + m[key], 0);
  if (!values.json) {
    console.log(
      `  loaded ${integer(scenario.messages)} messages and their segments in ${loadSeconds.toFixed(0)} s`,
    );
  }
  return {
    label: scenario.label,
    tableMessages: perChannel * options.channels,
    erased: outcome.counts.messages,
    seconds,
    requests,
    read: total("read"),
    write: total("write"),
    floor,
    derivedWrites,
    byOperation,
  };
}

const integer = (n: number) => Math.round(n).toLocaleString("en-US");
const per = (n: number, of: number) => (of === 0 ? "-" : (n / of).toFixed(2));

function report(m: Measure): void {
  const units = m.read + m.write;
  const floor = m.floor + m.derivedWrites;
  console.log(
    `\nErasing ${integer(m.erased)} messages among ${integer(m.tableMessages)} (${m.label}), ${options.channels} channels:`,
  );
  console.log(
    `  wall time ${m.seconds.toFixed(1)} s (${((m.seconds * 1000) / Math.max(1, m.erased)).toFixed(2)} ms per message)`,
  );
  console.log(
    `  requests ${integer(m.requests)} (${per(m.requests, m.erased)} per erased message)`,
  );
  console.log(`  per erased message: ${per(m.write, m.erased)} WRU, ${per(m.read, m.erased)} RRU`);
  console.log(`  ${"operation".padEnd(44)}${"write".padStart(9)}${"read".padStart(9)}`);
  for (const [operation, { read, write }] of Object.entries(m.byOperation).sort()) {
    console.log(
      `  ${operation.padEnd(44)}${per(write, m.erased).padStart(9)}${per(read, m.erased).padStart(9)}`,
    );
  }
  console.log(
    `  floor: ${per(m.floor, m.erased)} WRU per message to delete them (item and byAuthor entry) + ${per(m.derivedWrites, m.erased)} WRU of derived-item writes`,
  );
  const ratio = units / Math.max(1, floor);
  console.log(
    `  units / floor: ${ratio.toFixed(2)}x (target at most 3x) ${ratio <= 3 ? "meets target" : "MISSES target"}`,
  );
}

const emulators = await startEmulators({ sqs: false, ignoreEnvironment: true });
try {
  const scenarios: Scenario[] = [
    { messages: options.messages, label: "full" },
    {
      messages: Math.max(options.userMessages * 5, Math.floor(options.messages / 4)),
      label: "quarter",
    },
  ];
  const measures: Measure[] = [];
  for (const scenario of scenarios) {
    const m = await run(() => emulators.dynamodb(), scenario);
    measures.push(m);
    if (!values.json) report(m);
  }
  const [full, quarter] = measures;
  const unitsPer = (m: Measure) => (m.read + m.write) / Math.max(1, m.erased);
  const growth = unitsPer(full) / unitsPer(quarter);
  if (values.json) {
    console.log(JSON.stringify({ options, measures, growth }, null, 2));
  } else {
    console.log(
      `\nunits per erased message, full table / quarter table: ${growth.toFixed(2)} (${growth <= 1.1 ? "grows with the person's messages, not the table" : "GROWS WITH THE TABLE"})`,
    );
  }
} finally {
  await emulators.stop();
}
