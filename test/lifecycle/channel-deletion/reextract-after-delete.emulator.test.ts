/**
 * Re-extraction after delivery, end to end on the emulators: a segment delivered as the tick
 * delivers it and extracted by the extraction function; a deletion of more than
 * `REEXTRACT_CHANGED_SHARE` of its messages through the ingestion function; the request that
 * lands on the segment queue; the re-extraction that no longer cites the deleted messages. And a
 * crash after every AWS call of that deletion, then its re-send: one redaction asks once, and a
 * request delivered twice (a standard queue has no deduplication) re-extracts once.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Context } from "aws-lambda";
import { createMessagesTable, DynamoDbStore } from "convoseg/history/dynamodb";
import type { IngestResult } from "convoseg/ingest";
import { readExtractConfig } from "convoseg/knowledge/config";
import { KnowledgeReader } from "convoseg/knowledge/read";
import type { SegmentResult } from "convoseg/knowledge/store";
import {
  extractDependencies,
  REEXTRACT_ATTRIBUTE,
  segmentConsumer,
} from "convoseg/knowledge/write";
import { SqsSegmentSender } from "convoseg/pipeline";
import { DEFAULT_MAX_BODY_BYTES, segmentBody } from "convoseg/pipeline/contract";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { LocalEventSource } from "../../../local/event-source.js";
import { createSegmentQueue } from "../../../local/sqs.js";
import { createResultsTestTable, segmentOf, TEN_TEXTS } from "../../knowledge/fixtures.js";
import { testDynamoDbClient } from "../../support/dynamodb.js";
import { drainQueue, sqsEvent, testSqsClient, uniqueQueueName } from "../../support/sqs.js";

/**
 * A forwarder to an emulator that, once armed, counts the calls through it and answers the
 * `crashAt`-th with an error after forwarding it: the call took effect, its caller never learns
 * so, as when the process dies right after it.
 */
interface CrashingProxy {
  url: string;
  close(): Promise<void>;
}
const control = { armed: false, calls: 0, crashAt: 0, crashed: false };

async function crashingProxy(target: string): Promise<CrashingProxy> {
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(
        ([name]) => !["host", "connection", "content-length"].includes(name),
      ),
    ) as Record<string, string>;
    const upstream = await fetch(`${target}${request.url}`, {
      method: request.method,
      headers,
      body: request.method === "GET" ? undefined : Buffer.concat(chunks),
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (control.armed && ++control.calls === control.crashAt) {
      control.crashed = true;
      response.writeHead(400, { "content-type": "application/x-amz-json-1.0" });
      response.end(JSON.stringify({ __type: "InjectedCrash", message: "injected crash" }));
      return;
    }
    const kept = [...upstream.headers].filter(
      ([name]) => !["content-length", "transfer-encoding", "content-encoding"].includes(name),
    );
    response.writeHead(upstream.status, Object.fromEntries(kept));
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const client = testDynamoDbClient();
const sqs = testSqsClient();
const proxies: CrashingProxy[] = [];
const suffix = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
const tables = {
  messages: `reextract-messages-${suffix}`,
  channels: `reextract-channels-${suffix}`,
};
let resultsTable: string;

beforeAll(async () => {
  resultsTable = await createResultsTestTable(client);
  await createMessagesTable(client, tables.messages);
  await createChannelsTable(client, tables.channels);
  proxies.push(await crashingProxy(inject("dynamodbEndpoint")));
  proxies.push(await crashingProxy(inject("sqsEndpoint")));
});
afterAll(async () => {
  for (const proxy of proxies) await proxy.close();
});

/** The environment both functions are deployed with, their AWS calls through the proxies. */
function environment(segmentQueueUrl: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_DYNAMODB: proxies[0].url,
    AWS_ENDPOINT_URL_SQS: proxies[1].url,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    // The SDK's own retries would hide a crash: each call is made once.
    AWS_MAX_ATTEMPTS: "1",
    MESSAGES_TABLE: tables.messages,
    CHANNELS_TABLE: tables.channels,
    RESULTS_TABLE: resultsTable,
    SEGMENT_QUEUE_URL: segmentQueueUrl,
    REEXTRACT_CHANGED_SHARE: "0.25",
    EXTRACTOR: "offline",
    POWERTOOLS_METRICS_DISABLED: "true",
    POWERTOOLS_LOG_LEVEL: "SILENT",
  };
}

/** Both deployed handler modules, loaded the way Lambda loads them: configured by environment. */
async function loadFunctions(env: Record<string, string>) {
  vi.resetModules();
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const ingest = (await import("../../../functions/ingest/handler.js")).handler;
  const extract = (await import("../../../functions/extract/handler.js")).handler;
  return {
    ingest: async (messages: unknown[]) => (await ingest({ messages })) as IngestResult,
    extract: (event: Parameters<typeof extract>[0]) => extract(event, {} as Context),
  };
}

/** The channel's segment: its id is unique, as the deduplication ids made of it must be. */
const segmentIdOf = (channel: string) => `seg-${channel}`;
/** The ids of the channel's messages at `positions`. */
const idsOf = (channel: string, ...positions: number[]) =>
  positions.map((i) => `${segmentIdOf(channel)}-m${i}`);

/** Stores the channel's ten messages and delivers their segment as the tick does. */
async function delivered(
  channel: string,
  queueUrl: string,
  ingest: (messages: unknown[]) => Promise<IngestResult>,
) {
  const { segment, messages } = segmentOf(segmentIdOf(channel), TEN_TEXTS, channel);
  const stored = await ingest(
    messages.map(({ id, ts, text, author }) => ({ id, ts, text, channel, user: author })),
  );
  expect(stored.stored).toHaveLength(messages.length);
  const planned = { ...segment, messages: messages.map(({ id, ts }) => ({ id, ts })) };
  const body = segmentBody(
    planned,
    await new DynamoDbStore({ client, tableName: tables.messages }).read(channel),
    {
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      tableName: tables.messages,
    },
  );
  await new SqsSegmentSender({ client: sqs, queueUrl, fifo: queueUrl.endsWith(".fifo") }).send([
    { segment: planned, body },
  ]);
  return messages.map((m) => m.id);
}

const deletions = (channel: string, ids: readonly string[]) =>
  ids.map((id) => ({ op: "delete", id, channel }));

const result = (channel: string) =>
  new KnowledgeReader({ client, tableName: resultsTable }).result(channel, segmentIdOf(channel));

/** Every message id the result cites: its own list and its candidates' evidence. */
const cited = (stored: SegmentResult | undefined) =>
  new Set([
    ...(stored?.messageIds ?? []),
    ...(stored?.candidates ?? []).flatMap((c) => c.messageIds ?? []),
  ]);

describe("re-extraction after a deletion", () => {
  it("sends the segment back past the share, and its new result cites no deleted message", async () => {
    const queueUrl = await createSegmentQueue(sqs, uniqueQueueName("reextract"), { fifo: true });
    const deadLetters = await createSegmentQueue(sqs, uniqueQueueName("reextract-dlq"), {
      fifo: true,
    });
    const functions = await loadFunctions(environment(queueUrl));
    const seen: { attributes: Record<string, unknown> }[] = [];
    const source = new LocalEventSource({
      sqs,
      queueUrl,
      deadLetters: { queueUrl: deadLetters, maxReceiveCount: 3 },
      handler: (event) => {
        for (const record of event.Records) seen.push({ attributes: record.messageAttributes });
        return functions.extract(event);
      },
    });
    const ids = await delivered("ops", queueUrl, functions.ingest);
    await source.drain();
    const first = await result("ops");
    expect(first?.messageIds).toEqual(ids);
    const gone = idsOf("ops", 9, 4, 5);
    expect(cited(first)).toContain(gone[1]);

    // One of ten: redacted, not re-extracted (10% is not past 25%).
    expect((await functions.ingest(deletions("ops", gone.slice(0, 1)))).failed).toEqual([]);
    expect(await source.drain()).toEqual([]);
    // Three of ten: past the share, within SQS's deduplication window of the delivery.
    expect((await functions.ingest(deletions("ops", gone.slice(1)))).failed).toEqual([]);
    const redacted = await result("ops");
    expect(redacted).toMatchObject({ changedMessages: 3, extractedAt: first?.extractedAt });
    expect(redacted?.reextractPending).toBeUndefined();

    expect(await source.drain()).toHaveLength(1);
    expect(seen.at(-1)?.attributes[REEXTRACT_ATTRIBUTE]).toMatchObject({ stringValue: "true" });
    const again = await result("ops");
    expect(again?.replaced?.extractedAt).toBe(first?.extractedAt);
    expect(again?.messageIds).toEqual(ids.filter((id) => !gone.includes(id)));
    for (const id of gone) expect(cited(again)).not.toContain(id);
    expect(again?.changedMessages).toBeUndefined();
    const topics = await new KnowledgeReader({ client, tableName: resultsTable }).topics("ops");
    for (const id of gone) expect(JSON.stringify(topics)).not.toContain(`"${id}"`);
  });

  it.each([
    ["FIFO", true],
    ["standard", false],
  ])(
    "asks once per redaction after a crash following any AWS call, re-sent (%s queue)",
    async (_kind, fifo) => {
      const queueUrl = await createSegmentQueue(sqs, uniqueQueueName("reextract-crash"), { fifo });
      const functions = await loadFunctions(environment(queueUrl));
      const counts: Record<string, number> = {};
      const quiet = () => {};
      const consume = segmentConsumer(
        extractDependencies(readExtractConfig(environment(queueUrl)), {
          dynamodb: client,
          metrics: {
            add: (name, value) => {
              counts[name] = (counts[name] ?? 0) + value;
            },
          },
          logger: { info: quiet, warn: quiet, error: quiet },
        }),
      );
      const crashes: number[] = [];
      let points = 0;
      for (let crashAt = 1; ; crashAt++) {
        points = crashAt;
        const channel = `crash-${fifo ? "fifo" : "std"}-${crashAt}`;
        await delivered(channel, queueUrl, functions.ingest);
        const delivery = await drainQueue(sqs, queueUrl);
        await consume(sqsEvent(delivery.map((m) => m.Body ?? "")));
        const first = await result(channel);

        Object.assign(control, { armed: true, calls: 0, crashAt, crashed: false });
        const gone = idsOf(channel, 2, 4, 5);
        let sent = await functions.ingest(deletions(channel, gone));
        control.armed = false;
        const crashed = control.crashed;
        // Re-sent until applied, as the queue's retries re-send a failed record.
        for (let resend = 0; sent.failed.length > 0; resend++) {
          expect(resend, `crash after call ${crashAt}`).toBeLessThan(3);
          sent = await functions.ingest(deletions(channel, gone));
        }
        const requests = await drainQueue(sqs, queueUrl);
        if (fifo) expect(requests, `crash after call ${crashAt}`).toHaveLength(1);
        else expect(requests.length, `crash after call ${crashAt}`).toBeGreaterThanOrEqual(1);
        if (requests.length > 1) crashes.push(crashAt);

        const before = { ...counts };
        await consume(
          sqsEvent(
            requests.map((m) => m.Body ?? ""),
            { messageAttributes: lambdaAttributes(requests[0].MessageAttributes) },
          ),
        );
        expect(
          (counts.SegmentsExtracted ?? 0) - (before.SegmentsExtracted ?? 0),
          `crash after call ${crashAt}`,
        ).toBe(1);
        const again = await result(channel);
        expect(again?.replaced?.extractedAt).toBe(first?.extractedAt);
        for (const id of gone) expect(cited(again)).not.toContain(id);
        if (!crashed) break;
      }
      // Every call of the deletion: the change, the spans, the result, the states, the writes.
      expect(points).toBeGreaterThan(10);
      // A crash between the send and clearing the flag sends twice: only a FIFO queue drops one.
      if (!fifo) expect(crashes.length).toBeGreaterThan(0);
    },
    120_000,
  );
});

/** What a received message's attributes look like in a Lambda event record. */
function lambdaAttributes(
  attributes: Record<string, { StringValue?: string; DataType?: string }> | undefined,
) {
  return Object.fromEntries(
    Object.entries(attributes ?? {}).map(([name, value]) => [
      name,
      { stringValue: value.StringValue, dataType: value.DataType ?? "String" },
    ]),
  ) as never;
}
