import type { TestProject } from "vitest/node";
import { startDynamoDbLocal } from "../../local/dynamodb-local.js";

declare module "vitest" {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/**
 * One DynamoDB Local per test run. An endpoint already set in AWS_ENDPOINT_URL_DYNAMODB (e.g. an
 * emulator started by CI) is used as is. The teardown is returned, not exported: vitest did not
 * call a separately exported teardown, which left the JVM running and hung the run.
 */
export default async function setup({ provide }: TestProject) {
  const existing = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (existing) {
    provide("dynamodbEndpoint", existing);
    return;
  }
  const dynamodb = await startDynamoDbLocal();
  provide("dynamodbEndpoint", dynamodb.endpoint);
  return () => dynamodb.stop();
}
