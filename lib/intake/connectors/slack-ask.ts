/**
 * The Slack slash command (`/ask …`, its name configurable): verified as the Events receiver's
 * requests are (signing secret, timestamp, constant-time compare), acknowledged at once with a
 * line only the asker sees, and the question handed on; the answer goes to the command's
 * `response_url`, only to the asker unless the question starts with `--public`.
 */

import { type AskReceiverOptions, notTakenText, takeQuestion } from "./ask.js";
import { askWords } from "./ask-words.js";
import { ConnectorError } from "./errors.js";
import {
  checkBodySize,
  type HttpRequest,
  type HttpResponse,
  RefusalLog,
  refusalStatus,
  reply,
} from "./receive.js";
import { verifySlackRequest } from "./slack-signature.js";

export interface SlackAskOptions extends AskReceiverOptions {
  signingSecret: () => Promise<string>;
  /** The command's name as Slack sends it (default `/ask`). */
  command?: string;
}

/** The word that asks for the answer to be shown to the channel. */
const PUBLIC = /^\s*--public\b\s*/i;
const SLACK_ID = /^[A-Z0-9]{2,30}$/;

const ephemeral = (text: string) =>
  reply(200, JSON.stringify({ response_type: "ephemeral", text }));

/** A request handler: every outcome is a response; only a bug throws. */
export function slackAskReceiver(options: SlackAskOptions) {
  const { metrics, log } = options;
  const refusals = new RefusalLog(log, options.now);
  const command = options.command ?? "/ask";
  const refuse = (error: ConnectorError) => {
    metrics.add("AsksRefused", 1);
    refusals.refused(error);
    return reply(refusalStatus(error), JSON.stringify({ error: error.code }));
  };
  return async (request: HttpRequest): Promise<HttpResponse> => {
    metrics.add("AsksReceived", 1);
    let form: URLSearchParams;
    try {
      checkBodySize(request.body);
      let secret: string;
      try {
        secret = await options.signingSecret();
      } catch (error) {
        metrics.add("AsksFailed", 1);
        log.error("signing secret unreadable", { error: (error as Error).name });
        return reply(500, '{"error":"signing secret unreadable"}');
      }
      verifySlackRequest({
        headers: request.headers,
        rawBody: request.body,
        signingSecret: secret,
        now: options.now?.(),
      });
      form = new URLSearchParams(request.body.toString("utf8"));
      for (const field of ["command", "channel_id", "user_id", "response_url"]) {
        if (!form.get(field)) {
          throw new ConnectorError("CONNECTOR_MALFORMED_BODY", field, "missing");
        }
      }
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      return refuse(error);
    }
    const channel = form.get("channel_id") ?? "";
    const user = form.get("user_id") ?? "";
    if (form.get("command") !== command || !SLACK_ID.test(channel) || !SLACK_ID.test(user)) {
      metrics.add("AsksIgnored", 1);
      log.info("not the ask command", {});
      return ephemeral(`This endpoint answers ${command} only.`);
    }
    const text = form.get("text") ?? "";
    const inChannel = PUBLIC.test(text);
    const taken = await takeQuestion(
      options,
      {
        platform: "slack",
        channel,
        words: askWords(text.replace(PUBLIC, "")),
        responseUrl: form.get("response_url") ?? "",
        inChannel,
      },
      user,
      // A DM's id starts with D; a group DM's channel_name is mpdm-….
      channel.startsWith("D") || (form.get("channel_name") ?? "").startsWith("mpdm-"),
    );
    if (!taken.taken) return ephemeral(notTakenText(taken));
    return ephemeral("Looking through this channel's history…");
  };
}
