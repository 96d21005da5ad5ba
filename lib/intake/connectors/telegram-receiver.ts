/**
 * The Telegram webhook receiver's logic, apart from Lambda: check the secret token, map the
 * update's message to its ingest line, claim the `update_id` (Telegram re-sends an update until
 * it gets a 2xx) and hand the line to the ingest queue, never ingesting inline.
 */
import { ConnectorError } from "./errors.js";
import {
  type ChatScope,
  checkBodySize,
  type HttpRequest,
  type HttpResponse,
  type IngestLine,
  OK,
  outOfScope,
  RefusalLog,
  refusalStatus,
  reply,
  type TakeOptions,
  take,
} from "./receive.js";
import { parseTelegramUpdate, telegramUpdateLines, verifyTelegramRequest } from "./telegram.js";

export interface TelegramReceiverOptions extends TakeOptions {
  /** The `secret_token` given to setWebhook (cached by the caller). */
  secretToken: () => Promise<string>;
  /** The chats taken (default: every group, supergroup and channel; private chats left out). */
  scope?: ChatScope;
}

/** A request handler: each outcome is a response, logged and counted (only a bug throws). */
export function telegramReceiver(options: TelegramReceiverOptions) {
  const { metrics, log } = options;
  const refusals = new RefusalLog(log);
  const refuse = (error: ConnectorError) => {
    metrics.add("EventsRefused", 1);
    refusals.refused(error);
    return reply(refusalStatus(error), JSON.stringify({ error: error.code }));
  };
  return async (request: HttpRequest): Promise<HttpResponse> => {
    metrics.add("EventsReceived", 1);
    try {
      checkBodySize(request.body);
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      return refuse(error);
    }
    let token: string;
    try {
      token = await options.secretToken();
    } catch (error) {
      metrics.add("EventsFailed", 1);
      log.error("secret token unreadable", { error: (error as Error).name });
      return reply(500, '{"error":"secret token unreadable"}');
    }
    let lines: IngestLine[];
    let updateId: number;
    try {
      verifyTelegramRequest(request.headers, token);
      const update = parseTelegramUpdate(request.body);
      updateId = update.updateId;
      const chat = update.message?.chat;
      const outside =
        chat === undefined
          ? undefined
          : outOfScope(options.scope, String(chat.id), chat.type === "private");
      if (outside !== undefined) {
        metrics.add("EventsIgnored", 1);
        log.info("update outside the chats taken", { updateId, reason: outside });
        return OK();
      }
      lines = telegramUpdateLines(update);
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      return refuse(error);
    }
    if (lines.length === 0) {
      metrics.add("EventsIgnored", 1);
      log.info("update ignored", { updateId });
      return OK();
    }
    return take(options, String(updateId), lines, {});
  };
}
