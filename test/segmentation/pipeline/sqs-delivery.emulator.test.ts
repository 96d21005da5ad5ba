import {
  RequestThrottled,
  type SendMessageBatchCommandInput,
  type SendMessageBatchCommandOutput,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { textMessage } from "convoseg/history";
import { type SegmentDelivery, SegmentDeliveryError, SqsSegmentSender } from "convoseg/pipeline";
import {
  DEFAULT_MAX_BODY_BYTES,
  fifoId,
  parseSegmentBody,
  segmentBody,
} from "convoseg/pipeline/contract";
import { afterEach, describe, expect, it } from "vitest";
import { createSegmentQueue } from "../../../local/sqs.js";
import { drainQueue, testSqsClient, uniqueQueueName } from "../../support/sqs.js";

const T0 = 1_700_000_000_000;
const TABLE = "history";

/** `count` one-message segments of a channel, with real bodies; `text` sizes them. */
function deliveries(channel: string, count: number, text = "hello"): SegmentDelivery[] {
  return Array.from({ length: count }, (_, i) => {
    const message = textMessage("user", text, { id: `${i}`, ts: T0 + i * 60_000 });
    const segment = {
      segmentId: `${channel}:${i}`,
      channel,
      messages: [{ id: `${i}`, ts: T0 + i * 60_000 }],
      late: false,
      belongsAfter: null,
    };
    const options = { maxBodyBytes: DEFAULT_MAX_BODY_BYTES, tableName: TABLE };
    return { segment, body: segmentBody(segment, [message], options) };
  });
}

/** Interleaves the lists: a, b, a, b, ... */
function interleave<T>(...lists: T[][]): T[] {
  const length = Math.max(...lists.map((list) => list.length));
  return Array.from({ length }, (_, i) => lists.flatMap((list) => list.slice(i, i + 1))).flat();
}

const segmentIds = (bodies: { Body?: string }[]) =>
  bodies.map((m) => parseSegmentBody(m.Body as string).segmentId);
const idsOf = (list: SegmentDelivery[]) => list.map((d) => d.segment.segmentId);

type BatchCall = (
  input: SendMessageBatchCommandInput,
  send: (input: SendMessageBatchCommandInput) => Promise<SendMessageBatchCommandOutput>,
) => Promise<SendMessageBatchCommandOutput>;

/**
 * Routes each SendMessageBatch through `intercept` (which may change the request, fail it or
 * change the answer) and records the segment ids each call carried.
 */
function interceptBatches(client: SQSClient, intercept: BatchCall): string[][] {
  const calls: string[][] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "SendMessageBatchCommand") return next(args);
      const input = args.input as SendMessageBatchCommandInput;
      calls.push(segmentIds((input.Entries ?? []).map((e) => ({ Body: e.MessageBody }))));
      const output = await intercept(input, async (changed) => {
        const result = await next({ ...args, input: changed });
        return result.output as SendMessageBatchCommandOutput;
      });
      return { output } as never;
    },
    { step: "initialize", name: "interceptBatches" },
  );
  return calls;
}

/** Fails the request's entries at `positions` as SQS would (not sent, reported in Failed). */
async function failEntries(
  input: SendMessageBatchCommandInput,
  send: (input: SendMessageBatchCommandInput) => Promise<SendMessageBatchCommandOutput>,
  positions: number[],
  senderFault = false,
): Promise<SendMessageBatchCommandOutput> {
  const entries = input.Entries ?? [];
  const failed = entries.filter((_, i) => positions.includes(i));
  const kept = entries.filter((_, i) => !positions.includes(i));
  const output: SendMessageBatchCommandOutput =
    kept.length > 0
      ? await send({ ...input, Entries: kept })
      : { Successful: [], Failed: [], $metadata: {} };
  return {
    ...output,
    Failed: failed.map((entry) => ({
      Id: entry.Id,
      SenderFault: senderFault,
      Code: senderFault ? "InvalidParameterValue" : "InternalError",
      Message: senderFault ? "bad entry" : "try again",
    })),
  };
}

const clients: SQSClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.destroy();
});

async function setup(options: { fifo: boolean; maxBodyBytes?: number }) {
  const client = testSqsClient();
  clients.push(client);
  const queueUrl = await createSegmentQueue(client, uniqueQueueName("segments"), options);
  const sleeps: number[] = [];
  const sender = (maxAttempts?: number) =>
    new SqsSegmentSender({
      client,
      queueUrl,
      fifo: options.fifo,
      maxAttempts,
      random: () => 1,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
  return { client, queueUrl, sender, sleeps };
}

describe("SqsSegmentSender on a FIFO queue", () => {
  it("delivers each channel's segments in order across batches, grouped by channel", async () => {
    const { client, queueUrl, sender } = await setup({ fifo: true });
    const general = deliveries("general", 13);
    const random = deliveries("random", 12);
    const calls = interceptBatches(client, (input, send) => send(input));

    await sender().send(interleave(general, random));

    expect(calls.map((call) => call.length)).toEqual([10, 10, 5]);
    const received = await drainQueue(client, queueUrl);
    const ofGroup = (group: string) =>
      segmentIds(received.filter((m) => m.Attributes?.MessageGroupId === group));
    expect(ofGroup("general")).toEqual(idsOf(general));
    expect(ofGroup("random")).toEqual(idsOf(random));
    for (const message of received) {
      expect(message.Attributes?.MessageDeduplicationId).toBe(
        parseSegmentBody(message.Body as string).segmentId,
      );
    }
  });

  it("deduplicates a resent segment by its id while the first copy is queued", async () => {
    const { client, queueUrl, sender } = await setup({ fifo: true });
    const segments = deliveries("general", 3);

    await sender().send(segments);
    await sender().send(segments.slice(1));

    expect(segmentIds(await drainQueue(client, queueUrl))).toEqual(idsOf(segments));
  });

  it("stands in a digest for a channel SQS does not accept as a group id", async () => {
    const { client, queueUrl, sender } = await setup({ fifo: true });
    const channel = "#café du matin";
    const segments = deliveries(channel, 12);

    await sender().send(segments);

    const received = await drainQueue(client, queueUrl);
    expect(segmentIds(received)).toEqual(idsOf(segments));
    expect(new Set(received.map((m) => m.Attributes?.MessageGroupId))).toEqual(
      new Set([fifoId(channel)]),
    );
    expect(fifoId(channel)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("splits batches to stay under the 256 KiB batch payload", async () => {
    const { client, queueUrl, sender } = await setup({ fifo: true });
    const segments = deliveries("general", 5, "x".repeat(100 * 1024));
    const calls = interceptBatches(client, (input, send) => send(input));

    await sender().send(segments);

    expect(calls.map((call) => call.length)).toEqual([2, 2, 1]);
    expect(segmentIds(await drainQueue(client, queueUrl))).toEqual(idsOf(segments));
  });

  it("is refused by the server for a body over the queue's MaximumMessageSize", async () => {
    const { client, queueUrl, sender } = await setup({ fifo: true, maxBodyBytes: 1024 });
    const fits = deliveries("general", 1, "x".repeat(600));
    const tooLarge = deliveries("general", 1, "x".repeat(1024));

    await sender().send(fits);
    const sent = sender().send(tooLarge);

    await expect(sent).rejects.toThrow(SegmentDeliveryError);
    await expect(sent).rejects.toThrow(
      /0 of 1 segments confirmed; segment general:0 of channel general not delivered after 1 attempt\(s\): InvalidParameterValue/,
    );
    expect(await drainQueue(client, queueUrl)).toHaveLength(1);
  });
});

describe("SqsSegmentSender on a standard queue", () => {
  it("delivers every segment, without group or deduplication ids", async () => {
    const { client, queueUrl, sender } = await setup({ fifo: false });
    const segments = deliveries("general", 23);
    const calls = interceptBatches(client, (input, send) => send(input));

    await sender().send(segments);

    expect(calls.map((call) => call.length)).toEqual([10, 10, 3]);
    const received = await drainQueue(client, queueUrl);
    expect(segmentIds(received).sort()).toEqual(idsOf(segments).sort());
    for (const message of received) {
      expect(message.Attributes?.MessageGroupId).toBeUndefined();
      expect(message.Attributes?.MessageDeduplicationId).toBeUndefined();
    }
  });
});

describe("SqsSegmentSender retries", () => {
  it("retries a throttled batch after a backoff, losing and reordering nothing", async () => {
    const { client, queueUrl, sender, sleeps } = await setup({ fifo: true });
    const segments = deliveries("general", 25);
    let throttled = false;
    const calls = interceptBatches(client, (input, send) => {
      if (!throttled) {
        throttled = true;
        throw new RequestThrottled({ message: "Request is throttled.", $metadata: {} });
      }
      return send(input);
    });

    await sender().send(segments);

    expect(calls.map((call) => call.length)).toEqual([10, 10, 10, 5]);
    expect(sleeps).toEqual([50]);
    expect(segmentIds(await drainQueue(client, queueUrl))).toEqual(idsOf(segments));
  });

  it("resends failed entries before the next batch, so order within the group holds", async () => {
    const { client, queueUrl, sender, sleeps } = await setup({ fifo: true });
    const segments = deliveries("general", 15);
    let calls = 0;
    const seen = interceptBatches(client, (input, send) =>
      ++calls === 1 ? failEntries(input, send, [8, 9]) : send(input),
    );

    await sender().send(segments);

    expect(seen).toEqual([
      idsOf(segments.slice(0, 10)),
      idsOf(segments.slice(8, 10)),
      idsOf(segments.slice(10)),
    ]);
    expect(sleeps).toEqual([50]);
    expect(segmentIds(await drainQueue(client, queueUrl))).toEqual(idsOf(segments));
  });

  it("backs off exponentially and reports the confirmed count when attempts run out", async () => {
    const { client, queueUrl, sender, sleeps } = await setup({ fifo: true });
    const segments = deliveries("general", 15);
    interceptBatches(client, (input, send) =>
      failEntries(input, send, input.Entries?.length === 10 ? [9] : [0]),
    );

    const sent = sender(3).send(segments);

    await expect(sent).rejects.toThrow(
      "sqs delivery: 9 of 15 segments confirmed; segment general:9 of channel general not delivered after 3 attempt(s): InternalError: try again",
    );
    await expect(sent).rejects.toMatchObject({ confirmed: 9, total: 15 });
    expect(sleeps).toEqual([50, 100]);
    expect(segmentIds(await drainQueue(client, queueUrl))).toEqual(idsOf(segments.slice(0, 9)));
  });

  it("does not retry an entry SQS rejects as the sender's fault", async () => {
    const { client, sender, sleeps } = await setup({ fifo: true });
    const segments = deliveries("general", 4);
    interceptBatches(client, (input, send) => failEntries(input, send, [2], true));

    const sent = sender().send(segments);

    await expect(sent).rejects.toThrow(
      /3 of 4 segments confirmed; segment general:2 .* after 1 attempt\(s\): InvalidParameterValue: bad entry/,
    );
    expect(sleeps).toEqual([]);
  });

  it("stops when the signal is aborted", async () => {
    const { sender } = await setup({ fifo: true });
    const controller = new AbortController();
    controller.abort(new Error("tick deadline"));

    await expect(sender().send(deliveries("general", 2), controller.signal)).rejects.toThrow(
      "tick deadline",
    );
  });
});
