/**
 * `npm run bench:connectors`: the Slack receiver's acknowledgement time on the local stack. Signed
 * Events API requests through the receiver (`lib/intake/connectors`, as the Lambda runs it, the secret
 * given in process) with its claims on DynamoDB Local and its sends to the SQS emulator: one
 * request at a time, as one receiver instance takes them (the ack time's p50/p99/max and the
 * events per second that makes), a tenth of them Slack's retries of an earlier event.
 */
import { CreateQueueCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import {
  createClaimsTable,
  DynamoDbEventClaims,
  signSlackRequest,
  slackReceiver,
} from "convoseg/connectors";
import { startEmulators } from "../local/emulators.js";
import { benchArgs, usageError } from "./args.js";

const USAGE = `
npm run bench:connectors [-- options]

Sends signed Slack events through the Slack receiver, its claims on DynamoDB Local and its sends
to the SQS emulator, one at a time (a tenth are retries), and prints the acknowledgement time's
percentiles and the events per second of one receiver instance.

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
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    const ms = (n: number) => `${n.toFixed(1)} ms`;
    process.stdout.write(
      [
        `Slack receiver, ${events} events one at a time (${retries} retries, ${result.sent} sent)`,
        `ack p50 ${ms(result.ackMs.p50)}, p95 ${ms(result.ackMs.p95)}, p99 ${ms(result.ackMs.p99)}, max ${ms(result.ackMs.max)}`,
        `${result.eventsPerSecond.toFixed(0)} events/s for one receiver instance`,
        "",
      ].join("\n"),
    );
  }
} finally {
  await emulators.stop();
}
