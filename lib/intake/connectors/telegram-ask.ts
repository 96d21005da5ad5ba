/**
 * `/ask …` in a Telegram chat the bot is allowed in: the webhook's secret token checked, the
 * command read from a message (`/ask words`, or `/ask@bot words` when the bot's name is known),
 * and the question handed on; the answer is a sendMessage replying to it. A question not taken
 * (over the rate limit, without words) is told why in the webhook's response. A Telegram bot has
 * one webhook, so this endpoint is a bot of its own (or the one bot, without the ingest receiver).
 */

import {
  type AskReceiverOptions,
  askRefusals,
  notTakenText,
  takeQuestion,
  verifierOf,
} from "./ask.js";
import { askWords } from "./ask-words.js";
import { ConnectorError } from "./errors.js";
import { checkBodySize, type HttpRequest, type HttpResponse, OK, reply } from "./receive.js";
import { parseTelegramUpdate, verifyTelegramRequest } from "./telegram.js";

export interface TelegramAskOptions extends AskReceiverOptions {
  /** The `secret_token` given to setWebhook. */
  secretToken: () => Promise<string>;
  /** The command, without its slash (default `ask`). */
  command?: string;
  /** The bot's username: `/ask@other_bot` is then left to the other bot. */
  botUsername?: string;
}

const integer = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : undefined;
const USERNAME = /^[A-Za-z][A-Za-z0-9_]{3,31}$/;

/** A request handler: every outcome is a response (200 once verified); only a bug throws. */
export function telegramAskReceiver(options: TelegramAskOptions) {
  const { metrics, log } = options;
  const refuse = askRefusals(options);
  const command = options.command ?? "ask";
  const pattern = new RegExp(`^/${command}(?:@([A-Za-z0-9_]{1,64}))?(?:\\s+|$)`);
  return async (request: HttpRequest): Promise<HttpResponse> => {
    metrics.add("AsksReceived", 1);
    let update: ReturnType<typeof parseTelegramUpdate>;
    try {
      checkBodySize(request.body);
      const token = await verifierOf(options, "secret token", options.secretToken);
      if ("failed" in token) return token.failed;
      verifyTelegramRequest(request.headers, token.value);
      update = parseTelegramUpdate(request.body);
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      return refuse(error);
    }
    const message = update.message;
    const chat = integer(message?.chat?.id);
    const messageId = integer(message?.message_id);
    const said = typeof message?.text === "string" ? message.text : "";
    const match = pattern.exec(said);
    const addressed = match?.[1];
    if (
      update.edited ||
      message === undefined ||
      chat === undefined ||
      match === null ||
      (addressed !== undefined &&
        options.botUsername !== undefined &&
        addressed.toLowerCase() !== options.botUsername.toLowerCase())
    ) {
      metrics.add("AsksIgnored", 1);
      log.info("update without a question", { updateId: update.updateId });
      return OK();
    }
    const username = message.chat?.username;
    const person = integer(message.from?.id) ?? integer(message.sender_chat?.id) ?? chat;
    const taken = await takeQuestion(
      options,
      {
        platform: "telegram",
        channel: String(chat),
        words: askWords(said.slice(match[0].length)),
        ...(typeof username === "string" && USERNAME.test(username) && { chatUsername: username }),
        ...(messageId !== undefined && { replyTo: messageId }),
      },
      String(person),
      message.chat?.type === "private",
    );
    // Outside its chats the bot stays silent; else the asker learns why (no token needed: a
    // webhook's response may carry one Bot API call, which Telegram makes without a reply).
    if (taken.taken || taken.why === "outside") return OK();
    return reply(
      200,
      JSON.stringify({
        method: "sendMessage",
        chat_id: chat,
        text: notTakenText(taken).replace("/ask", `/${command}`),
        ...(messageId !== undefined && {
          reply_parameters: { message_id: messageId, allow_sending_without_reply: true },
        }),
      }),
    );
  };
}
