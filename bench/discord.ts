/**
 * `npm run bench:discord`: the Discord poller's coverage under rate limits, against the scripted
 * Discord API on 127.0.0.1 (bench/discord-server.ts) with its buckets and the global 50/s. Many
 * channels with some history are polled once (cursors set), then each gets new messages and one
 * scheduled tick is measured: whether every new message was read within the tick, the requests
 * per new message, the 429s, and the tick's time. The clock is simulated: waits for a bucket or
 * the global limit take no real time, but every request and ingestion's real time counts, so a
 * tick's time is real work plus the waits Discord would impose.
 */

import {
  DiscordRest,
  MemoryCursorStore,
  type PollSummary,
  pollDiscord,
  simulatedClock,
} from "convoseg/connectors/discord";
import { MemoryStore } from "convoseg/history";
import { ingest } from "convoseg/ingest";
import { benchArgs, usageError } from "./args.js";
import { startDiscordServer } from "./discord-server.js";

const USAGE = `
npm run bench:discord [-- options]

Polls a scripted Discord API under its rate limits (per-channel buckets, the global 50
requests/s) with a simulated clock: one tick after every channel got new messages. Prints
whether all were read within the tick, requests per new message, 429s and the tick's time.

  --channels N       channels polled (default 1000)
  --new N            new messages per channel in the measured tick (default 10)
  --history N        messages each channel has before (default 200)
  --reread N         the re-read window (default 200; 0: none)
  --tick SECONDS     the tick: the run's deadline is this less 20 s (default 300)
  --bucket-limit N   requests per channel bucket per second (default 5)
  --latency-ms MS    the API's latency, real milliseconds per answer (default 50)
  --concurrency N    channels polled at once (default 8)
  --no-threads       poll no threads (saves the archived-threads request per channel)
  --json             the numbers as one JSON object
  --help             this text
`;

const values = benchArgs(USAGE, {
  channels: { type: "string", default: "1000" },
  new: { type: "string", default: "10" },
  history: { type: "string", default: "200" },
  reread: { type: "string", default: "200" },
  tick: { type: "string", default: "300" },
  "bucket-limit": { type: "string", default: "5" },
  "latency-ms": { type: "string", default: "50" },
  concurrency: { type: "string", default: "8" },
  "no-threads": { type: "boolean", default: false },
  json: { type: "boolean", default: false },
});
const count = (name: string, text: string, min = 1) => {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min)
    usageError(USAGE, `--${name} must be an integer >= ${min}`);
  return n;
};
const options = {
  channels: count("channels", values.channels),
  newPerChannel: count("new", values.new),
  history: count("history", values.history, 0),
  reread: count("reread", values.reread, 0),
  tickMs: count("tick", values.tick, 30) * 1000,
  bucketLimit: count("bucket-limit", values["bucket-limit"]),
  latencyMs: count("latency-ms", values["latency-ms"], 0),
  concurrency: count("concurrency", values.concurrency),
  threads: !values["no-threads"],
};

const TOKEN = "bench-token";
const clock = simulatedClock(Date.UTC(2026, 0, 5, 12));
const server = await startDiscordServer({
  token: TOKEN,
  now: clock.now,
  bucketLimit: options.bucketLimit,
  latencyMs: options.latencyMs,
});
const store = new MemoryStore();
const cursors = new MemoryCursorStore();
const channels = Array.from({ length: options.channels }, (_, i) => String(10_000 + i));
const started = clock.now();
for (const id of channels) {
  server.channel(id, { guildId: "1" });
  for (let i = 0; i < options.history; i++) server.post(id);
}

let nextTick = clock.now();
const tick = async (): Promise<{ summary: PollSummary; tickMs: number; realMs: number }> => {
  // Ticks start a schedule period apart, as EventBridge starts them.
  await clock.sleep(nextTick - clock.now());
  nextTick += options.tickMs;
  const from = clock.now();
  const realFrom = performance.now();
  const rest = new DiscordRest({
    token: TOKEN,
    baseUrl: server.url,
    clock,
    deadline: from + options.tickMs - 20_000,
  });
  const summary = await pollDiscord(
    {
      rest,
      cursors,
      clock,
      sink: { ingest: (lines) => ingest(store, lines) },
      store: { getMessages: (channel, ids) => store.getMessages(channel, ids) },
    },
    {
      channels,
      rereadWindow: options.reread,
      threads: options.threads,
      concurrency: options.concurrency,
      backfillFrom: started - 60_000,
    },
  );
  return { summary, tickMs: clock.now() - from, realMs: performance.now() - realFrom };
};

// The first tick reads the history (the backfill); it may take more than one tick.
let first = await tick();
let firstTicks = 1;
while (first.summary.deadlineReached) {
  first = await tick();
  firstTicks += 1;
}
for (const id of channels) for (let i = 0; i < options.newPerChannel; i++) server.post(id);
const posted = options.channels * options.newPerChannel;
const measured = await tick();
await server.close();

const s = measured.summary;
const result = {
  channels: options.channels,
  newMessages: posted,
  read: s.ingested,
  allReadWithinTick: s.ingested === posted && !s.deadlineReached,
  tickSeconds: Number((measured.tickMs / 1000).toFixed(1)),
  realSeconds: Number((measured.realMs / 1000).toFixed(1)),
  requests: s.requests,
  requestsPerNewMessage: Number((s.requests / posted).toFixed(3)),
  rateLimited: s.rateLimited,
  reread: options.reread,
  threads: options.threads,
  bucketLimit: options.bucketLimit,
  latencyMs: options.latencyMs,
  concurrency: options.concurrency,
  backfillTicks: firstTicks,
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  process.stdout.write(
    [
      `channels ${result.channels}, ${options.newPerChannel} new messages each (${posted}), history ${options.history}, re-read ${options.reread}, threads ${options.threads ? "on" : "off"}`,
      `API latency ${options.latencyMs} ms, ${options.concurrency} channels at once, buckets of ${options.bucketLimit}/s`,
      `read ${result.read} of ${posted} within the tick: ${result.allReadWithinTick ? "yes" : "NO"}`,
      `tick ${result.tickSeconds} s simulated (deadline ${(options.tickMs - 20_000) / 1000} s), ${result.realSeconds} s real`,
      `requests ${result.requests}: ${result.requestsPerNewMessage} per new message; 429s ${result.rateLimited}`,
      `the backfill of the history took ${firstTicks} tick(s)`,
      "",
    ].join("\n"),
  );
}
