/**
 * A local stand-in for Lambda's SQS event source mapping: receives from a queue, hands each batch
 * to a handler as an `SQSEvent`, deletes the records the handler did not report as failed, and
 * makes the failed ones visible again after a backoff, as a retry with the queue's visibility
 * timeout would. A record that failed `maxReceiveCount` times moves to the dead-letter queue, as
 * a redrive policy does on AWS (done here because the emulator counts a visibility change as a
 * receive).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";

export type BatchHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export interface EventSourceOptions {
  sqs: SQSClient;
  queueUrl: string;
  handler: BatchHandler;
  /** Where a record goes after it failed `maxReceiveCount` times. */
  deadLetters: { queueUrl: string; maxReceiveCount: number };
  /** Records per event (default 10, SQS's receive limit). */
  batchSize?: number;
  /** Seconds a failed record stays invisible after its n-th failure: default 2^(n-1), at most 30. */
  retryDelaySeconds?: (receiveCount: number) => number;
  /**
   * Whether extraction has stopped (a failure budget ran out): from then on what arrives is
   * received and deleted without being handled, failed records are neither retried nor
   * dead-lettered, and `drain` no longer waits for retries. Default: never.
   */
  stopped?: () => boolean;
}

const RECEIVE_VISIBILITY_SECONDS = 300;

export class LocalEventSource {
  /** Failures so far, by message id. */
  private readonly failures = new Map<string, number>();

  constructor(private readonly options: EventSourceOptions) {}

  /**
   * Receives and handles until nothing is visible; returns the records received for the first
   * time, in order.
   */
  async poll(): Promise<Message[]> {
    const received: Message[] = [];
    for (;;) {
      const { Messages = [] } = await this.options.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.options.queueUrl,
          MaxNumberOfMessages: this.options.batchSize ?? 10,
          WaitTimeSeconds: 0,
          VisibilityTimeout: RECEIVE_VISIBILITY_SECONDS,
          AttributeNames: ["All"],
          // As Lambda's event source hands them over: `convoseg-reextract` is one.
          MessageAttributeNames: ["All"],
        }),
      );
      if (Messages.length === 0) return received;
      received.push(...Messages.filter((m) => !this.failures.has(m.MessageId ?? "")));
      if (this.isStopped()) await this.delete(Messages);
      else await this.handle(Messages);
    }
  }

  /** Polls until the queue holds nothing, waiting out retry delays; `onWait` reports waits. */
  async drain(onWait?: (pending: number) => void): Promise<Message[]> {
    const received: Message[] = [];
    for (;;) {
      received.push(...(await this.poll()));
      if (this.isStopped()) return received;
      const pending = await this.pending();
      if (pending === 0) return received;
      onWait?.(pending);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Messages in the queue, visible or not. */
  async pending(): Promise<number> {
    const { Attributes = {} } = await this.options.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.options.queueUrl,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    return (
      Number(Attributes.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  }

  private async handle(messages: Message[]): Promise<void> {
    const response = await this.options.handler({ Records: messages.map(this.record) });
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const succeeded = messages.filter((m) => !failed.has(m.MessageId ?? ""));
    const retried = messages.filter((m) => failed.has(m.MessageId ?? ""));
    await this.delete(succeeded);
    // Stopped while handling: the failed records stay where they are, unextracted.
    if (this.isStopped()) return;
    const delay = this.options.retryDelaySeconds ?? defaultRetryDelay;
    const later: { message: Message; failures: number }[] = [];
    for (const message of retried) {
      const failures = (this.failures.get(message.MessageId ?? "") ?? 0) + 1;
      this.failures.set(message.MessageId ?? "", failures);
      if (failures < this.options.deadLetters.maxReceiveCount) {
        later.push({ message, failures });
      } else {
        await this.deadLetter(message);
      }
    }
    if (later.length > 0) {
      await this.options.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: later.map(({ message, failures }, i) => ({
            Id: String(i),
            ReceiptHandle: message.ReceiptHandle,
            VisibilityTimeout: delay(failures),
          })),
        }),
      );
    }
  }

  private isStopped(): boolean {
    return this.options.stopped?.() ?? false;
  }

  private async delete(messages: Message[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      await this.options.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: messages
            .slice(i, i + 10)
            .map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
  }

  /** Moves a message to the dead-letter queue: sent there, then deleted here. */
  private async deadLetter(message: Message): Promise<void> {
    const attributes = message.Attributes ?? {};
    await this.options.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.options.deadLetters.queueUrl,
        MessageBody: message.Body,
        MessageAttributes: message.MessageAttributes,
        MessageGroupId: attributes.MessageGroupId,
        MessageDeduplicationId: attributes.MessageDeduplicationId,
      }),
    );
    await this.options.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: this.options.queueUrl,
        Entries: [{ Id: "0", ReceiptHandle: message.ReceiptHandle }],
      }),
    );
  }

  private readonly record = (message: Message): SQSRecord => {
    const attributes = (message.Attributes ?? {}) as Record<string, string>;
    return {
      messageId: message.MessageId ?? "",
      receiptHandle: message.ReceiptHandle ?? "",
      body: message.Body ?? "",
      attributes: {
        ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? "1",
        SentTimestamp: attributes.SentTimestamp ?? "0",
        SenderId: attributes.SenderId ?? "",
        ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? "0",
        MessageGroupId: attributes.MessageGroupId,
        MessageDeduplicationId: attributes.MessageDeduplicationId,
        SequenceNumber: attributes.SequenceNumber,
      },
      messageAttributes: Object.fromEntries(
        Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
          name,
          { stringValue: value.StringValue, dataType: value.DataType ?? "String" },
        ]),
      ),
      md5OfBody: message.MD5OfBody ?? "",
      eventSource: "aws:sqs",
      eventSourceARN: queueArn(this.options.queueUrl),
      awsRegion: "us-east-1",
    };
  };
}

function defaultRetryDelay(failures: number): number {
  return Math.min(30, 2 ** (failures - 1));
}

/** The ARN a queue URL stands for (`…/<account>/<name>`), as the event source names it. */
function queueArn(queueUrl: string): string {
  const [account, name] = new URL(queueUrl).pathname.split("/").filter(Boolean).slice(-2);
  return `arn:aws:sqs:us-east-1:${account}:${name}`;
}
