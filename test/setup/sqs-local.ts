import type { TestProject } from "vitest/node";
import { startLocalSqs } from "../../local/sqs.js";

declare module "vitest" {
  export interface ProvidedContext {
    sqsEndpoint: string;
  }
}

/**
 * One SQS emulator per test run. An endpoint already set in AWS_ENDPOINT_URL_SQS (e.g. an
 * emulator started by CI) is used as is. The teardown is returned, not exported: vitest did not
 * call a separately exported teardown.
 */
export default async function setup({ provide }: TestProject) {
  const existing = process.env.AWS_ENDPOINT_URL_SQS;
  if (existing) {
    provide("sqsEndpoint", existing);
    return;
  }
  const sqs = await startLocalSqs();
  provide("sqsEndpoint", sqs.endpoint);
  return () => sqs.stop();
}
