/**
 * `npm run bench:connectors`: the Slack receiver's acknowledgement time on the local stack. Signed
 * Events API requests through the receiver (`lib/intake/connectors`, as the Lambda runs it, the secret
 * given in process) with its claims on DynamoDB Local and its sends to the SQS emulator: one
 * request at a time, as one receiver instance takes them (the ack time's p50/p99/max and the
 * events per second that makes), a tenth of them Slack's retries of an earlier event. Then the
 * ask endpoints' (Slack's slash command, Discord's interactions, Telegram's `/ask`): signed
 * requests verified and each question handed on by an asynchronous Lambda invocation to a Lambda
 * API on 127.0.0.1 that answers 202 at once, as Lambda does; their ack time is what the platform
 * waits for (Slack and Discord give up after 3 s).
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { CreateQueueCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import {
  AskRateLimit,
  createClaimsTable,
  DynamoDbEventClaims,
  discordAskReceiver,
  discordPublicKey,
  type HttpRequest,
  type HttpResponse,
  signSlackRequest,
  slackAskReceiver,
  slackReceiver,
  telegramAskReceiver,
} from "convoseg/connectors";
import { startEmulators } from "../local/emulators.js";
import { benchArgs, usageError } from "./args.js";

const USAGE = `
npm run bench:connectors [-- options]

Sends signed Slack events through the Slack receiver, its claims on DynamoDB Local and its sends
to the SQS emulator, one at a time (a tenth are retries), and prints the acknowledgement time's
percentiles and the events per second of one receiver instance; then signed questions through
the Slack, Discord and Telegram ask endpoints, each handed on by an asynchronous invocation to a
Lambda API on 127.0.0.1, and their acknowledgement time's percentiles.

  --events N   events to send after a warm-up of 50 (default 2000)
  --json       the numbers as one JSON object
  --help       this text
`;

const values = benchArgs(USAGE, {
  events: { type: "string", default: "2000" },
  json: { type: "boolean", default: false },
});
const events = Number(values.events);
if (!Number.isSafeInteger(events) || events < 1)
  usageError(USAGE, "--events must be a positive integer");

const SECRET = "bench-signing-secret";
const WARM_UP = 50;

const emulators = await startEmulators({ ignoreEnvironment: true });
try {
  const dynamodb = emulators.dynamodb();
  const sqs = emulators.sqs();
  const tableName = `bench-claims-${Date.now().toString(36)}`;
  await createClaimsTable(dynamodb, tableName);
  const { QueueUrl: queueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: `bench-ingest-${Date.now().toString(36)}` }),
  );
  let sent = 0;
  const receive = slackReceiver({
    signingSecret: async () => SECRET,
    claims: new DynamoDbEventClaims({ client: dynamodb, tableName, platform: "slack" }),
    send: async (line) => {
      await sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(line) }),
      );
      sent++;
    },
    metrics: { add: () => {} },
    log: { info: () => {}, warn: () => {}, error: () => {} },
  });
  const request = (i: number, retry: boolean) => {
    const body = JSON.stringify({
      type: "event_callback",
      event_id: `EvB${i}`,
      event: {
        type: "message",
        channel: `C${i % 20}`,
        user: "U0001",
        text: `message ${i} with <@U0002> and <https://example.com|a link>`,
        ts: `${1_736_478_630 + i}.000100`,
      },
    });
    const timestamp = Math.floor(Date.now() / 1000);
    return {
      body: Buffer.from(body),
      headers: {
        "x-slack-request-timestamp": String(timestamp),
        "x-slack-signature": signSlackRequest(SECRET, timestamp, body),
        ...(retry ? { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" } : {}),
      },
    };
  };
  for (let i = 0; i < WARM_UP; i++) await receive(request(-1 - i, false));
  const times: number[] = [];
  let retries = 0;
  const started = performance.now();
  for (let i = 0; i < events; i++) {
    // Every tenth request is Slack's retry of the one five before: acknowledged, not sent.
    const retry = i % 10 === 9;
    if (retry) retries++;
    const r = request(retry ? i - 5 : i, retry);
    const t = performance.now();
    const response = await receive(r);
    times.push(performance.now() - t);
    if (response.statusCode !== 200) throw new Error(`request ${i}: ${response.statusCode}`);
  }
  const wall = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  const result = {
    events,
    retries,
    sent: sent - WARM_UP,
    ackMs: { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: times[times.length - 1] },
    eventsPerSecond: events / wall,
  };
  if (result.sent !== events - retries)
    throw new Error(`sent ${result.sent}, expected ${events - retries}`);
  const ask = await askBench(events);
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ ...result, ask })}\n`);
  } else {
    process.stdout.write(
      [
        `Slack receiver, ${events} events one at a time (${retries} retries, ${result.sent} sent)`,
        `ack p50 ${ms(result.ackMs.p50)}, p95 ${ms(result.ackMs.p95)}, p99 ${ms(result.ackMs.p99)}, max ${ms(result.ackMs.max)}`,
        `${result.eventsPerSecond.toFixed(0)} events/s for one receiver instance`,
        ...Object.entries(ask).map(
          ([name, a]) =>
            `${name} ask endpoint, ${a.questions} questions handed on: ack p50 ${ms(a.ackMs.p50)}, p99 ${ms(a.ackMs.p99)}, max ${ms(a.ackMs.max)} (p99 ${((a.ackMs.p99 / 3000) * 100).toFixed(1)}% of the 3 s Slack and Discord wait)`,
        ),
        "",
      ].join("\n"),
    );
  }
} finally {
  await emulators.stop();
}

/** The p50, p95, p99 and max of `times` (ms). */
function percentiles(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted[sorted.length - 1] };
}

/** The three ask endpoints' acknowledgement times, `count` signed questions each. */
async function askBench(count: number) {
  let invoked = 0;
  const lambdaApi = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      invoked++;
      response.writeHead(202, { "content-type": "application/json" }).end("");
    });
  });
  lambdaApi.listen(0, "127.0.0.1");
  await once(lambdaApi, "listening");
  const { port } = lambdaApi.address() as AddressInfo;
  const lambda = new LambdaClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: "us-east-1",
    credentials: { accessKeyId: "bench", secretAccessKey: "bench" },
  });
  const parts = {
    ask: async (question: unknown) => {
      await lambda.send(
        new InvokeCommand({
          FunctionName: "bench-answer",
          InvocationType: "Event",
          Payload: Buffer.from(JSON.stringify(question)),
        }),
      );
    },
    // Many people in many channels: the limit is taken on every question, never reached.
    limit: new AskRateLimit({ perPerson: 600, perChannel: 6000 }),
    metrics: { add: () => {} },
    log: { info: () => {}, warn: () => {}, error: () => {} },
  };
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const key = discordPublicKey(
    publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("hex"),
  );
  const now = () => String(Math.floor(Date.now() / 1000));
  const endpoints: Record<
    string,
    { receive: (r: HttpRequest) => Promise<HttpResponse>; request: (i: number) => HttpRequest }
  > = {
    Slack: {
      receive: slackAskReceiver({ ...parts, signingSecret: async () => SECRET }),
      request: (i) => {
        const body = new URLSearchParams({
          command: "/ask",
          text: `how do I fix grub after update ${i}`,
          channel_id: `C${i % 20}`,
          user_id: `U${i % 500}`,
          response_url: "https://hooks.slack.com/commands/T/1/x",
        }).toString();
        const ts = now();
        return {
          headers: {
            "x-slack-request-timestamp": ts,
            "x-slack-signature": signSlackRequest(SECRET, ts, body),
          },
          body: Buffer.from(body),
        };
      },
    },
    Discord: {
      receive: discordAskReceiver({ ...parts, publicKey: async () => key }),
      request: (i) => {
        const body = JSON.stringify({
          type: 2,
          application_id: "1300000000000000001",
          token: `token-${i}`,
          guild_id: "1100000000000000002",
          channel_id: String(1_100_000_000_000_000_100n + BigInt(i % 20)),
          member: { user: { id: String(1_400_000_000_000_000_000n + BigInt(i % 500)) } },
          data: { name: "ask", options: [{ name: "question", value: `fix grub ${i}` }] },
        });
        const ts = now();
        return {
          headers: {
            "x-signature-ed25519": sign(null, Buffer.from(ts + body), privateKey).toString("hex"),
            "x-signature-timestamp": ts,
          },
          body: Buffer.from(body),
        };
      },
    },
    Telegram: {
      receive: telegramAskReceiver({ ...parts, secretToken: async () => SECRET }),
      request: (i) => ({
        headers: { "x-telegram-bot-api-secret-token": SECRET },
        body: Buffer.from(
          JSON.stringify({
            update_id: i,
            message: {
              message_id: i,
              date: 1,
              chat: { id: -1_001_000 - (i % 20), type: "supergroup" },
              from: { id: i % 500 },
              text: `/ask fix grub ${i}`,
            },
          }),
        ),
      }),
    },
  };
  const out: Record<string, { questions: number; ackMs: ReturnType<typeof percentiles> }> = {};
  try {
    for (const [name, { receive, request }] of Object.entries(endpoints)) {
      for (let i = 0; i < WARM_UP; i++) await receive(request(1_000_000 + i));
      const before = invoked;
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const r = request(i);
        const t = performance.now();
        const response = await receive(r);
        times.push(performance.now() - t);
        if (response.statusCode !== 200)
          throw new Error(`${name} ask ${i}: ${response.statusCode}`);
      }
      if (invoked - before !== count)
        throw new Error(`${name}: ${invoked - before} questions handed on, expected ${count}`);
      out[name] = { questions: count, ackMs: percentiles(times) };
    }
  } finally {
    lambda.destroy();
    lambdaApi.close();
  }
  return out;
}
