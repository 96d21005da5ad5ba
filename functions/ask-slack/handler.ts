/**
 * The Slack `/ask` slash command behind a Lambda Function URL: verified with the app's signing
 * secret, acknowledged at once, the question handed to the answer function, which posts to the
 * command's `response_url`; with ASK_MENTIONS, app mentions too, answered in their thread. Logs carry channel ids and reasons, never the question's words.
 */
import { slackAskReceiver } from "convoseg/connectors";
import { askFunction } from "../ask-receiver.js";
import { requiredEnvironment, secretString } from "../webhook-receiver.js";

const secretId = requiredEnvironment("slack ask", "SLACK_SIGNING_SECRET_ARN");
const { parts, handler: functionUrlHandler } = askFunction("slack");

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export const handler = functionUrlHandler(
  slackAskReceiver({
    ...parts,
    signingSecret: () => secretString(secretId),
    command: process.env.ASK_COMMAND || "/ask",
    // On when the answer function has the bot token (askSlackBotToken).
    mentions: process.env.ASK_MENTIONS === "true",
  }),
);
