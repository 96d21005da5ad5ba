/**
 * The emulators a local command runs on: DynamoDB Local and the SQS emulator, started here, or
 * the endpoints `AWS_ENDPOINT_URL_DYNAMODB` / `AWS_ENDPOINT_URL_SQS` name (an emulator you run,
 * whose tables outlive the command).
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { startDynamoDbLocal } from "./dynamodb-local.js";
import { startLocalSqs } from "./sqs.js";

export interface Emulators {
  dynamodb(): DynamoDBClient;
  sqs(): SQSClient;
  stop(): Promise<void>;
}

/**
 * Starts what the environment does not name; `sqs: false` starts no SQS emulator, `dynamodb`
 * names a DynamoDB Local already serving (a workspace's), and `ignoreEnvironment` starts both
 * whatever the environment names (a benchmark measures its own). `stop` also closes every client
 * made, so that no open socket outlives the emulators.
 */
export async function startEmulators(
  options: { sqs?: boolean; dynamodb?: string; ignoreEnvironment?: boolean } = {},
): Promise<Emulators> {
  const stops: (() => Promise<void>)[] = [];
  const clients: { destroy(): void }[] = [];
  const credentials = { accessKeyId: "local", secretAccessKey: "local" };
  const env = options.ignoreEnvironment ? {} : process.env;
  const region = env.AWS_REGION ?? "us-east-1";
  let dynamodbEndpoint = options.dynamodb ?? env.AWS_ENDPOINT_URL_DYNAMODB;
  let sqsEndpoint = env.AWS_ENDPOINT_URL_SQS;
  try {
    if (!dynamodbEndpoint) {
      const local = await startDynamoDbLocal();
      stops.push(local.stop);
      dynamodbEndpoint = local.endpoint;
    }
    if (!sqsEndpoint && options.sqs !== false) {
      const local = await startLocalSqs();
      stops.push(local.stop);
      sqsEndpoint = local.endpoint;
    }
  } catch (error) {
    await Promise.all(stops.map((stop) => stop()));
    throw error;
  }
  const track = <C extends { destroy(): void }>(client: C): C => {
    clients.push(client);
    return client;
  };
  return {
    dynamodb: () => track(new DynamoDBClient({ endpoint: dynamodbEndpoint, region, credentials })),
    sqs: () => track(new SQSClient({ endpoint: sqsEndpoint, region, credentials })),
    stop: async () => {
      for (const client of clients) client.destroy();
      await Promise.all(stops.map((stop) => stop()));
    },
  };
}
