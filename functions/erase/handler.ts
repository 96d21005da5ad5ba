import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import type { Context } from "aws-lambda";
import { dynamoDbErasure, runEraseUser, s3DigestArchive } from "convoseg/erasure";

/** Read once at cold start: a missing setting fails the first invocation with its name. */
function requiredEnvironment(name: string): string {
  const value = process.env[name]?.trim();
  if (!value) throw new Error(`erase: environment variable ${name} must be set`);
  return value;
}

const logger = new Logger({ serviceName: "convoseg-erase" });
/** Set when the stack keeps scheduled digests: they quote people, so they follow an erasure. */
const digestBucket = process.env.DIGEST_BUCKET?.trim() || undefined;
const deps = dynamoDbErasure(
  {
    client: new DynamoDBClient({}),
    messagesTable: requiredEnvironment("MESSAGES_TABLE"),
    resultsTable: requiredEnvironment("RESULTS_TABLE"),
    channelsTable: requiredEnvironment("CHANNELS_TABLE"),
  },
  digestBucket === undefined
    ? {}
    : { digests: s3DigestArchive({ client: new S3Client({}), bucket: digestBucket }) },
);

/**
 * `EraseUser`: invoked by an operator, or the `EraseUserLoop` state machine, with `{userId?,
 * user?, channels?, requestedBy, dryRun?}`. Answers `done: false` when it stopped near its
 * deadline: invoke it again with the same event, and it resumes from its audit item. Logs
 * counts only, never the user id, the name or a message.
 *
 * @public The Lambda runtime calls it: infra names this file as the function's entry.
 */
export async function handler(event: unknown, context: Context) {
  const response = await runEraseUser(deps, event, () => context.getRemainingTimeInMillis());
  logger.info("erasure run", {
    done: response.done,
    dryRun: response.dryRun,
    counts: response.counts,
    audit: response.audit,
  });
  return response;
}
