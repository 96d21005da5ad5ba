import { Duration } from "aws-cdk-lib";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { PipelineFunction } from "./function.js";
import type { Storage } from "./storage.js";

export interface ErasureProps {
  /** The tables it reads and redacts: messages and results. */
  readonly storage: Storage;
  /** Retention of the function's log group. */
  readonly logRetention: RetentionDays;
}

/**
 * The `EraseUser` function (docs/erasure.md): an operator invokes it with `{user, channels?,
 * requestedBy}`; it erases page by page under an audit item in the results table and answers
 * `done: false` when near its 15-minute deadline, to be invoked again with the same event. No
 * schedule, no queue, no retries of its own: an operator's request, run one at a time.
 */
export class Erasure extends Construct {
  readonly function: PipelineFunction;

  constructor(scope: Construct, id: string, props: ErasureProps) {
    super(scope, id);
    this.function = new PipelineFunction(this, "EraseUser", {
      entry: "functions/erase/handler.ts",
      description: "convoseg EraseUser: erase a person's messages and what was derived from them",
      environment: {
        MESSAGES_TABLE: props.storage.messages.tableName,
        RESULTS_TABLE: props.storage.results.tableName,
        POWERTOOLS_SERVICE_NAME: "convoseg-erase",
      },
      timeout: Duration.minutes(15),
      memorySize: 512,
      logRetention: props.logRetention,
      // Two runs of one erasure at once would fight over its audit item: one at a time.
      reservedConcurrentExecutions: 1,
      // An operator's synchronous call; an asynchronous one is not retried behind their back.
      retryAttempts: 0,
    });
    props.storage.grantErasure(this.function.role);
  }
}
