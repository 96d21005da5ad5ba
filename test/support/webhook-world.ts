/**
 * The world a webhook receiver's Lambda test runs in: a messages, channels and claims table on
 * DynamoDB Local, an ingest queue on the SQS emulator, a Secrets Manager on 127.0.0.1 holding
 * the receiver's secret, and a way to load a handler module with the environment pointing at
 * them. Its hooks are registered where it is called: at a test file's top level.
 */
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import { createClaimsTable } from "convoseg/connectors";
import { createMessagesTable } from "convoseg/history/dynamodb";
import { createChannelsTable } from "convoseg/pipeline/schema";
import { afterAll, beforeAll, inject, vi } from "vitest";
import { testDynamoDbClient } from "./dynamodb.js";
import { type SecretsServer, startSecretsServer } from "./secrets-manager.js";
import { testSqsClient, uniqueQueueName } from "./sqs.js";

export interface WebhookWorld {
  client: ReturnType<typeof testDynamoDbClient>;
  sqs: ReturnType<typeof testSqsClient>;
  messagesTable: string;
  channelsTable: string;
  claimsTable: string;
  /** The ingest queue's URL, once the hooks have made it. */
  queueUrl(): string;
  /** The secrets server, once started (its `reads` count each secret's reads). */
  secrets(): SecretsServer;
  /**
   * The `handler` export of `module` (a path from the repository root, as `functions/x/handler.js`)
   * loaded afresh with the AWS endpoints of this world and `environment` set.
   */
  load<T>(module: string, environment: Record<string, string | undefined>): Promise<T>;
}

/** A world named `name` (its tables and queue) whose Secrets Manager holds `secret` at `arn`. */
export function webhookWorld(name: string, arn: string, secret: string): WebhookWorld {
  const suffix = Date.now().toString(36);
  const client = testDynamoDbClient();
  const sqs = testSqsClient();
  const tables = {
    messagesTable: `${name}-${suffix}`,
    channelsTable: `${name}-${suffix}-channels`,
    claimsTable: `${name}-${suffix}-claims`,
  };
  let queueUrl = "";
  let secrets: SecretsServer | undefined;
  beforeAll(async () => {
    await createMessagesTable(client, tables.messagesTable);
    await createChannelsTable(client, tables.channelsTable);
    await createClaimsTable(client, tables.claimsTable);
    ({ QueueUrl: queueUrl = "" } = await sqs.send(
      new CreateQueueCommand({ QueueName: uniqueQueueName(`${name}-ingest`) }),
    ));
    secrets = await startSecretsServer({ [arn]: secret });
  });
  afterAll(() => secrets?.close());
  const started = () => {
    if (secrets === undefined) throw new Error("the webhook world's hooks have not run yet");
    return secrets;
  };
  return {
    client,
    sqs,
    ...tables,
    queueUrl: () => queueUrl,
    secrets: started,
    async load<T>(module: string, environment: Record<string, string | undefined>) {
      vi.resetModules();
      const aws = {
        // The counts are the receivers' unit tests' concern: no EMF lines in the test output.
        POWERTOOLS_METRICS_DISABLED: "true",
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "test",
        AWS_SECRET_ACCESS_KEY: "test",
        AWS_ENDPOINT_URL_DYNAMODB: inject("dynamodbEndpoint"),
        AWS_ENDPOINT_URL_SQS: inject("sqsEndpoint"),
        AWS_ENDPOINT_URL_SECRETS_MANAGER: started().url,
      };
      for (const [key, value] of Object.entries({ ...aws, ...environment })) vi.stubEnv(key, value);
      return (await import(`../../${module}`)).handler as T;
    },
  };
}
