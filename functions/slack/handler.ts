/**
 * The Slack Events API receiver behind a Lambda Function URL: verifies each request with the
 * app's signing secret, answers `url_verification`, and sends each message event's ingest line
 * to the ingest queue (one SendMessage), where the ingestion function takes it as any producer's.
 * A retry of an event already taken is acknowledged and not sent again (claims in a DynamoDB
 * table: the ingest queue is standard, with no deduplication id). Logs carry ids, never text.
 */
import { SlackUserNames, slackReceiver } from "convoseg/connectors";
import { requiredEnvironment, secretString, webhookFunction } from "../webhook-receiver.js";

const secretId = requiredEnvironment("slack", "SLACK_SIGNING_SECRET_ARN");
/** Optional: with the bot token, authors and mentions are named (users.info), else left as ids. */
const botTokenId = process.env.SLACK_BOT_TOKEN_ARN || undefined;

const { parts, handler: functionUrlHandler } = webhookFunction("slack");

const userNames =
  botTokenId === undefined
    ? undefined
    : new SlackUserNames({ token: () => secretString(botTokenId) });

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export const handler = functionUrlHandler(
  slackReceiver({
    ...parts,
    signingSecret: () => secretString(secretId),
    ...(userNames && { userNames: (ids: string[]) => userNames.names(ids) }),
  }),
);
