/**
 * Runs an SQS emulator (local-aws-sqs, pure JS) in this process for tests and the local pipeline:
 * it speaks the JSON protocol of the current SDK, supports FIFO queues with group and
 * deduplication ids and enforces each queue's MaximumMessageSize, and is ready in milliseconds.
 * It listens on 127.0.0.1 only, on a free port unless one is given, so parallel runs never clash.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { DEFAULT_MAX_BODY_BYTES } from "convoseg/pipeline/contract";
import { createRequestHandler } from "local-aws-sqs";

export interface LocalSqs {
  endpoint: string;
  stop(): Promise<void>;
}

const HOST = "127.0.0.1";

/**
 * Starts the emulator. Its own `createSqsServer` is not used: it attaches no error listener, so a
 * port already in use crashes the process instead of rejecting; this serves its request handler
 * from a server we own and tells it the bound port, which it writes into queue URLs.
 */
export async function startLocalSqs(options: { port?: number } = {}): Promise<LocalSqs> {
  const requestedPort = options.port ?? 0;
  const { service, requestHandler } = createRequestHandler({
    port: requestedPort,
    hostname: HOST,
    // Lets a test delete and recreate a queue name without the real 60-second wait.
    emulateQueueCreationLifecycle: false,
  });
  const server = createServer(requestHandler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(requestedPort, HOST, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  service.PORT = port;
  return { endpoint: `http://${HOST}:${port}`, stop: () => close(server) };
}

/** Closes the server without waiting for idle keep-alive connections of clients still around. */
function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

/**
 * Creates (or finds, CreateQueue being idempotent for equal attributes) the queue segments are
 * delivered to and returns its URL. A FIFO queue's name gets the `.fifo` suffix SQS requires.
 * MaximumMessageSize is set to the body limit the sender's `segmentBody` uses, so a body that
 * `segmentBody` produces always fits.
 */
export async function createSegmentQueue(
  client: SQSClient,
  name: string,
  options: { fifo: boolean; maxBodyBytes?: number },
): Promise<string> {
  const queueName = segmentQueueName(name, options.fifo);
  const attributes: Record<string, string> = {
    MaximumMessageSize: String(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES),
  };
  if (options.fifo) attributes.FifoQueue = "true";
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: queueName, Attributes: attributes }),
  );
  if (QueueUrl === undefined) throw new Error(`CreateQueue ${queueName} returned no queue URL`);
  return QueueUrl;
}

function segmentQueueName(name: string, fifo: boolean): string {
  if (fifo) return name.endsWith(".fifo") ? name : `${name}.fifo`;
  if (name.endsWith(".fifo")) {
    throw new Error(`queue ${name}: only a FIFO queue's name may end in .fifo`);
  }
  return name;
}

/**
 * Receives and deletes until the queue is empty, returning the messages in receive order. A FIFO
 * group yields its next messages only once the previous ones are deleted, which this does.
 * `AttributeNames: ["All"]` because the emulator ignores `MessageSystemAttributeNames`.
 */
export async function drainQueue(client: SQSClient, queueUrl: string): Promise<Message[]> {
  const received: Message[] = [];
  for (;;) {
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 30,
        AttributeNames: ["All"],
        MessageAttributeNames: ["All"],
      }),
    );
    if (Messages.length === 0) return received;
    received.push(...Messages);
    await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}
