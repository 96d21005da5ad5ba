/**
 * Telegram's `/ask` behind a Lambda Function URL (the webhook of the bot that answers): the
 * secret token checked, the question handed to the answer function, which replies with
 * sendMessage. Logs carry chat ids and reasons, never the question's words.
 */
import { telegramAskReceiver } from "convoseg/connectors";
import { askFunction } from "../ask-receiver.js";
import { requiredEnvironment, secretString } from "../webhook-receiver.js";

const secretId = requiredEnvironment("telegram ask", "TELEGRAM_SECRET_TOKEN_ARN");
const { parts, handler: functionUrlHandler } = askFunction("telegram");

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export const handler = functionUrlHandler(
  telegramAskReceiver({
    ...parts,
    secretToken: () => secretString(secretId),
    command: process.env.ASK_COMMAND || "ask",
    ...(process.env.TELEGRAM_BOT_USERNAME && { botUsername: process.env.TELEGRAM_BOT_USERNAME }),
  }),
);
