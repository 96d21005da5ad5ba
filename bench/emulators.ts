/**
 * The emulators a benchmark starts for itself: DynamoDB Local and the SQS emulator, with every
 * client made for them, stopped by one call.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { startDynamoDbLocal } from "../local/dynamodb-local.js";
import { startLocalSqs } from "../local/sqs.js";

/** DynamoDB Local, the SQS emulator and every client made for them, stopped by one call. */
export class Emulators {
  private readonly clients: { destroy(): void }[] = [];

  private constructor(
    private readonly endpoints: { dynamodb: string; sqs: string },
    private readonly stops: (() => Promise<void>)[],
  ) {}

  static async start(): Promise<Emulators> {
    const dynamodb = await startDynamoDbLocal();
    try {
      const sqs = await startLocalSqs();
      return new Emulators({ dynamodb: dynamodb.endpoint, sqs: sqs.endpoint }, [
        dynamodb.stop,
        sqs.stop,
      ]);
    } catch (error) {
      await dynamodb.stop();
      throw error;
    }
  }

  dynamodb(): DynamoDBClient {
    return this.track(new DynamoDBClient({ ...CLIENT, endpoint: this.endpoints.dynamodb }));
  }

  sqs(): SQSClient {
    return this.track(new SQSClient({ ...CLIENT, endpoint: this.endpoints.sqs }));
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.destroy();
    await Promise.all(this.stops.map((stop) => stop()));
  }

  private track<C extends { destroy(): void }>(client: C): C {
    this.clients.push(client);
    return client;
  }
}

/** Static credentials keep the clients off the environment's. */
const CLIENT = {
  region: "us-east-1",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
};
