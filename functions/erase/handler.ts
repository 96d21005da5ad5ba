import { Logger } from "@aws-lambda-powertools/logger";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import type { Context } from "aws-lambda";
import { dynamoDbErasure, runEraseUser, s3DigestArchive } from "convoseg/erasure";
import { deployedSearchIndexer, searchEnvironment } from "convoseg/search/lancedb";

/** Read once at cold start: a missing setting fails the first invocation with its name. */
function requiredEnvironment(name: string): string {
  const value = process.env[name]?.trim();
  if (!value) throw new Error(`erase: environment variable ${name} must be set`);
  return value;
}

const logger = new Logger({ serviceName: "convoseg-erase" });
/** Set when the stack keeps scheduled digests: they quote people, so they follow an erasure. */
const digestBucket = process.env.DIGEST_BUCKET?.trim() || undefined;
const tables = {
  client: new DynamoDBClient({}),
  messagesTable: requiredEnvironment("MESSAGES_TABLE"),
  resultsTable: requiredEnvironment("RESULTS_TABLE"),
  channelsTable: requiredEnvironment("CHANNELS_TABLE"),
};
/** The secret the audit item's keys are hashed with (the stack's generated one). */
const auditSecretId = requiredEnvironment("AUDIT_KEY_SECRET_ARN");

/** Built at the first invocation: the audit secret is read then, and kept for the container. */
async function dependencies() {
  const auditSecret = await getSecret(auditSecretId);
  if (typeof auditSecret !== "string") {
    throw new Error(`erase: the secret ${auditSecretId} is not a string`);
  }
  // With `SEARCH_INDEX_URI`, the person's search documents go too, older versions included.
  const search = deployedSearchIndexer({
    ...searchEnvironment(process.env),
    ...tables,
  });
  return dynamoDbErasure(
    { ...tables, auditSecret },
    {
      ...(digestBucket && {
        digests: s3DigestArchive({ client: new S3Client({}), bucket: digestBucket }),
      }),
      ...(search && { search }),
    },
  );
}
let deps: ReturnType<typeof dependencies> | undefined;

/**
 * `EraseUser`: invoked by an operator, or the `EraseUserLoop` state machine, with `{userId?,
 * user?, channels?, requestedBy, dryRun?}`. Answers `done: false` when it stopped near its
 * deadline: invoke it again with the same event, and it resumes from its audit item. Logs
 * counts only, never the user id, the name or a message.
 *
 * @public The Lambda runtime calls it: infra names this file as the function's entry.
 */
export async function handler(event: unknown, context: Context) {
  deps ??= dependencies().catch((error: unknown) => {
    // A failed read is tried again by the next invocation, not kept.
    deps = undefined;
    throw error;
  });
  const response = await runEraseUser(await deps, event, () => context.getRemainingTimeInMillis());
  logger.info("erasure run", {
    done: response.done,
    dryRun: response.dryRun,
    counts: response.counts,
    audit: response.audit,
  });
  return response;
}
