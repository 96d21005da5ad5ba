import { inject, vi } from "vitest";

/**
 * Points the AWS SDK's default configuration at the emulators of the test setup, with static
 * credentials, as a user's own environment would: for code that builds its own clients (the
 * commands, the Lambda handlers). `vi.unstubAllEnvs` (vitest's `unstubEnvs`) undoes it.
 */
export function stubLocalAws(): void {
  vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", inject("dynamodbEndpoint"));
  vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
  vi.stubEnv("AWS_REGION", "us-east-1");
  vi.stubEnv("AWS_ACCESS_KEY_ID", "test");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "test");
}
