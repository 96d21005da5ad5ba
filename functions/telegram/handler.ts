/**
 * The Telegram webhook receiver behind a Lambda Function URL: checks the secret token set with
 * setWebhook, and sends each message or channel post (or its edit) as one ingest line to the
 * ingest queue (one SendMessage). A repeated `update_id` is acknowledged and not sent again
 * (claims in a DynamoDB table: the ingest queue is standard). Logs carry ids, never text.
 */
import { telegramReceiver } from "convoseg/connectors";
import { requiredEnvironment, secretString, webhookFunction } from "../webhook-receiver.js";

const secretId = requiredEnvironment("telegram", "TELEGRAM_SECRET_TOKEN_ARN");

const { parts, handler: functionUrlHandler } = webhookFunction("telegram");

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export const handler = functionUrlHandler(
  telegramReceiver({ ...parts, secretToken: () => secretString(secretId) }),
);
