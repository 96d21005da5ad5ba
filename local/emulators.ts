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

/** Starts what the environment does not name; `sqs: false` starts no SQS emulator. */
export async function startEmulators(options: { sqs?: boolean } = {}): Promise<Emulators> {
  const stops: (() => Promise<void>)[] = [];
  const credentials = { accessKeyId: "local", secretAccessKey: "local" };
  const region = process.env.AWS_REGION ?? "us-east-1";
  let dynamodbEndpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  let sqsEndpoint = process.env.AWS_ENDPOINT_URL_SQS;
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
  return {
    dynamodb: () => new DynamoDBClient({ endpoint: dynamodbEndpoint, region, credentials }),
    sqs: () => new SQSClient({ endpoint: sqsEndpoint, region, credentials }),
    stop: async () => {
      await Promise.all(stops.map((stop) => stop()));
    },
  };
}
