import { Duration } from "aws-cdk-lib";
import {
  DeduplicationScope,
  FifoThroughputLimit,
  Queue,
  QueueEncryption,
  type QueueProps,
} from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";

/** Longest SQS retention: time for an operator to notice, fix and redrive. */
const RETENTION = Duration.days(14);

/**
 * Every queue of the pipeline: SQS-managed encryption at rest (no key to manage; the producers
 * are AWS services or our own roles) and a policy that refuses requests not made over TLS.
 */
export function secureQueue(scope: Construct, id: string, props: QueueProps = {}): Queue {
  return new Queue(scope, id, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: RETENTION,
    ...props,
  });
}

export interface QueueWithDeadLettersProps {
  fifo?: boolean;
  /** The queue's name (ending in `.fifo` for a FIFO queue); the DLQ's adds `-dlq`. */
  queueName?: string;
  maxMessageSizeBytes?: number;
  visibilityTimeout: Duration;
  /** Receives before a message moves to the dead-letter queue (default 5). */
  maxReceiveCount?: number;
}

/** A queue and its dead-letter queue, both secure; a FIFO queue gets a FIFO DLQ. */
export class QueueWithDeadLetters extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: QueueWithDeadLettersProps) {
    super(scope, id);
    const fifo = props.fifo || undefined;
    this.deadLetterQueue = secureQueue(this, "DeadLetters", {
      fifo,
      queueName: props.queueName?.replace(/(\.fifo)?$/, "-dlq$1"),
      maxMessageSizeBytes: props.maxMessageSizeBytes,
    });
    this.queue = secureQueue(this, "Queue", {
      fifo,
      // High-throughput FIFO: order and deduplication per message group (a channel; the
      // deduplication id is a segment id, unique within its channel anyway), so the queue takes
      // thousands of sends a second instead of 300; same price.
      ...(fifo && {
        deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
        fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      }),
      queueName: props.queueName,
      maxMessageSizeBytes: props.maxMessageSizeBytes,
      visibilityTimeout: props.visibilityTimeout,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount ?? 5 },
    });
  }
}
