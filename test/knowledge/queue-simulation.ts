/**
 * The segment queue as the extraction function meets it, on a fake clock: a FIFO queue (one
 * message in flight per group, a batch of up to five), the consumer's visibility changes as its
 * retry delays, SQS's redrive after `maxReceiveCount` receives, and the consumer's own sends to
 * the dead-letter queue. Time jumps to the next message that becomes visible, so a day of
 * backoff runs in milliseconds.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";

const QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:segments.fifo";
export const DLQ_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/segments-dlq.fifo";

interface Queued {
  id: string;
  body: string;
  group: string;
  visibleAt: number;
  receives: number;
  handle: string;
}

export class QueueSimulation {
  /** The fake clock, epoch ms. */
  now: number;
  readonly deadLetters: { body: string; by: "consumer" | "redrive" }[] = [];
  /** Every receive of every message, with the clock when it happened. */
  readonly receives: { id: string; at: number }[] = [];
  private readonly queued: Queued[] = [];
  private handles = 0;

  constructor(
    start: number,
    private readonly options: { maxReceiveCount: number; visibilityTimeoutSeconds: number },
  ) {
    this.now = start;
  }

  send(id: string, body: string, group: string): void {
    this.queued.push({ id, body, group, visibleAt: this.now, receives: 0, handle: "" });
  }

  get pending(): number {
    return this.queued.length;
  }

  /** What the consumer's SQS client does: visibility changes and sends to the DLQ. */
  readonly sqs = {
    send: async (command: unknown) => {
      if (command instanceof ChangeMessageVisibilityBatchCommand) {
        for (const entry of command.input.Entries ?? []) {
          const message = this.queued.find((m) => m.handle === entry.ReceiptHandle);
          if (message) message.visibleAt = this.now + (entry.VisibilityTimeout ?? 0) * 1000;
        }
        return {};
      }
      if (command instanceof SendMessageCommand && command.input.QueueUrl === DLQ_URL) {
        this.deadLetters.push({ body: command.input.MessageBody ?? "", by: "consumer" });
        return {};
      }
      throw new Error(`unexpected command ${(command as object).constructor.name}`);
    },
  } as unknown as SQSClient;

  /**
   * Runs the consumer until the queue is empty or `until`: each step jumps the clock to the
   * next visible message, receives a batch as Lambda would, and deletes what succeeded.
   */
  async run(handler: (event: SQSEvent) => Promise<SQSBatchResponse>, until: number): Promise<void> {
    while (this.queued.length > 0) {
      this.now = Math.max(this.now, Math.min(...this.queued.map((m) => m.visibleAt)));
      if (this.now > until) return;
      const batch = this.receiveBatch();
      if (batch.length === 0) continue;
      const response = await handler({
        Records: batch.map((m) => ({
          messageId: m.id,
          receiptHandle: m.handle,
          body: m.body,
          attributes: {
            ApproximateReceiveCount: String(m.receives),
            SentTimestamp: "0",
            SenderId: "tick",
            ApproximateFirstReceiveTimestamp: "0",
            MessageGroupId: m.group,
            MessageDeduplicationId: m.id,
          },
          messageAttributes: {},
          md5OfBody: "",
          eventSource: "aws:sqs",
          eventSourceARN: QUEUE_ARN,
          awsRegion: "us-east-1",
        })),
      });
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      for (const message of batch) {
        if (!failed.has(message.id)) this.queued.splice(this.queued.indexOf(message), 1);
      }
    }
  }

  /** The visible heads of the groups (FIFO), up to five; past maxReceiveCount, redriven. */
  private receiveBatch(): Queued[] {
    const batch: Queued[] = [];
    const blocked = new Set<string>();
    for (const message of [...this.queued]) {
      if (blocked.has(message.group)) continue;
      blocked.add(message.group);
      if (message.visibleAt > this.now || batch.length === 5) continue;
      if (message.receives >= this.options.maxReceiveCount) {
        this.queued.splice(this.queued.indexOf(message), 1);
        this.deadLetters.push({ body: message.body, by: "redrive" });
        continue;
      }
      message.receives++;
      message.handle = `handle-${++this.handles}`;
      message.visibleAt = this.now + this.options.visibilityTimeoutSeconds * 1000;
      this.receives.push({ id: message.id, at: this.now });
      batch.push(message);
      // The rest of the group comes in the same batch, after it, as FIFO delivers.
      for (const next of this.queued) {
        if (batch.length === 5) break;
        if (next === message || next.group !== message.group || batch.includes(next)) continue;
        if (next.visibleAt > this.now || next.receives >= this.options.maxReceiveCount) break;
        next.receives++;
        next.handle = `handle-${++this.handles}`;
        next.visibleAt = this.now + this.options.visibilityTimeoutSeconds * 1000;
        this.receives.push({ id: next.id, at: this.now });
        batch.push(next);
      }
    }
    return batch;
  }
}
