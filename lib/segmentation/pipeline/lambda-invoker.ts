/**
 * Starts the workers of a fanned-out tick as asynchronous invocations of the worker function:
 * Lambda queues each event and answers 202 at once, so the dispatcher is done in one round trip
 * per worker however long the workers run. Throttles and 5xx answers are retried by the SDK's
 * standard retry strategy (`maxAttempts`); an invocation still refused after that fails the
 * share's dispatch (`dispatchTick` reports it). Lambda's own queue then owns the event: it
 * retries the function's throttles until the event's maximum age.
 */
import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import { PipelineError } from "./errors.js";
import type { WorkerInvoker } from "./fan-out.js";
import type { TickShare } from "./types.js";

export interface LambdaWorkerInvokerOptions {
  client: LambdaClient;
  /** The worker function's name or ARN. */
  functionName: string;
}

export class LambdaWorkerInvoker implements WorkerInvoker {
  private readonly client: LambdaClient;
  private readonly functionName: string;

  constructor(options: LambdaWorkerInvokerOptions) {
    this.client = options.client;
    this.functionName = options.functionName;
  }

  async invoke(share: TickShare): Promise<void> {
    const result = await this.client.send(
      new InvokeCommand({
        FunctionName: this.functionName,
        InvocationType: "Event",
        Payload: new TextEncoder().encode(JSON.stringify({ share })),
      }),
    );
    // An asynchronous invocation that Lambda queued answers 202; anything else did not queue it.
    if (result.StatusCode !== 202) {
      throw new PipelineError(
        "PIPELINE_WORKER_NOT_QUEUED",
        `lambda ${this.functionName}: share ${share.index}/${share.of} not queued (status ${result.StatusCode})`,
      );
    }
  }
}
