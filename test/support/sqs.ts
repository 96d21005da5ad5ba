import { randomBytes } from "node:crypto";
import { SQSClient } from "@aws-sdk/client-sqs";
import { inject } from "vitest";

/**
 * A client for the emulator from the global setup; static credentials keep it off the env, and
 * the SDK's own retries are off so that every retry a test sees is the code's under test.
 */
export function testSqsClient(): SQSClient {
  return new SQSClient({
    endpoint: inject("sqsEndpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 1,
  });
}

/** A queue name no other test file uses. */
export function uniqueQueueName(prefix = "test"): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

export { drainQueue } from "../../local/sqs.js";
