/**
 * The Slack slash command (`/ask …`, its name configurable): verified as the Events receiver's
 * requests are (signing secret, timestamp, constant-time compare), acknowledged at once with a
 * line only the asker sees, and the question handed on; the answer goes to the command's
 * `response_url`, only to the asker unless the question starts with `--public`. With `mentions`,
 * the same URL takes the Events API's `app_mention` (`@app question`), answered in its thread;
 * Slack's retry of an event is acknowledged and not asked again (the first was handed on). The
 * same URL, as the app's Interactivity Request URL, takes the "Mark as answer" message shortcut
 * (callback id `mark_answer`; `reopen_question` and `hide_question` say the chosen message's
 * question is open, or not one): acknowledged with an empty 200, the mark handed on, the person
 * told through the shortcut's `response_url` by the mark function.
 */

import {
  type AskReceiverOptions,
  askRefusals,
  notTakenText,
  takeMark,
  takeQuestion,
  verifierOf,
} from "./ask.js";
import { askWords } from "./ask-words.js";
import { ConnectorError } from "./errors.js";
import { checkBodySize, type HttpRequest, type HttpResponse, header, reply } from "./receive.js";
import { parseSlackEnvelope } from "./slack-events.js";
import { MARK_CALLBACKS, slackShortcut } from "./slack-shortcut.js";
import { verifySlackRequest } from "./slack-signature.js";

export interface SlackAskOptions extends AskReceiverOptions {
  signingSecret: () => Promise<string>;
  /** The command's name as Slack sends it (default `/ask`). */
  command?: string;
  /** Answer app mentions (the answer function then needs the bot token). */
  mentions?: boolean;
}

/** The word that asks for the answer to be shown to the channel (some clients make `--` a dash). */
const PUBLIC = /^\s*(--|\u2014)public\b\s*/i;
const SLACK_ID = /^[A-Z0-9]{2,30}$/;

const ephemeral = (text: string) =>
  reply(200, JSON.stringify({ response_type: "ephemeral", text }));

/** A request handler: every outcome is a response; only a bug throws. */
export function slackAskReceiver(options: SlackAskOptions) {
  const { metrics, log } = options;
  const refuse = askRefusals(options);
  const command = options.command ?? "/ask";
  return async (request: HttpRequest): Promise<HttpResponse> => {
    metrics.add("AsksReceived", 1);
    let form: URLSearchParams;
    let body = "";
    try {
      checkBodySize(request.body);
      const secret = await verifierOf(options, "signing secret", options.signingSecret);
      if ("failed" in secret) return secret.failed;
      verifySlackRequest({
        headers: request.headers,
        rawBody: request.body,
        signingSecret: secret.value,
        now: options.now?.(),
      });
      body = request.body.toString("utf8");
      if (body.trimStart().startsWith("{")) return await mention(body, request);
      form = new URLSearchParams(body);
      const payload = form.get("payload");
      if (payload !== null) return await shortcut(payload);
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

  /**
   * An interaction's payload: the "Mark as answer" shortcut is handed on, acknowledged with an
   * empty 200 (Slack shows nothing of a shortcut's acknowledgement: the mark function tells the
   * person). A mark refused here (outside the channels answered, over the rate limit, marking
   * off) is counted and logged, and gets no reply. Other interactions are acknowledged, ignored.
   */
  async function shortcut(payload: string): Promise<HttpResponse> {
    const action = slackShortcut(payload);
    const said = action === undefined ? undefined : MARK_CALLBACKS[action.callbackId];
    if (
      action === undefined ||
      said === undefined ||
      !Object.hasOwn(MARK_CALLBACKS, action.callbackId)
    ) {
      metrics.add("AsksIgnored", 1);
      log.info("interaction without a mark", {});
      return reply(200, "", "text/plain");
    }
    await takeMark(
      options,
      {
        platform: "slack",
        channel: action.channel,
        messageId: action.messageTs,
        action: said,
        by: action.user,
        ...(action.threadTs !== undefined && { thread: action.threadTs }),
        responseUrl: action.responseUrl,
      },
      action.user,
      action.isPrivate,
    );
    return reply(200, "", "text/plain");
  }

  /** An Events API envelope: the URL's verification, or an app mention to hand on. */
  async function mention(body: string, request: HttpRequest): Promise<HttpResponse> {
    const envelope = parseSlackEnvelope(body);
    if (envelope.type === "url_verification") return reply(200, envelope.challenge, "text/plain");
    const event = envelope.type === "event_callback" ? envelope.event : undefined;
    const channel = typeof event?.channel === "string" ? event.channel : "";
    const user = typeof event?.user === "string" ? event.user : "";
    const ts = typeof event?.ts === "string" ? event.ts : "";
    const thread = typeof event?.thread_ts === "string" ? event.thread_ts : ts;
    if (
      !options.mentions ||
      event?.type !== "app_mention" ||
      header(request.headers, "X-Slack-Retry-Num") !== undefined ||
      !SLACK_ID.test(channel) ||
      !SLACK_ID.test(user) ||
      !/^\d+\.\d+$/.test(thread)
    ) {
      metrics.add("AsksIgnored", 1);
      log.info("event without a question", {});
      return reply(200, '{"ok":true}');
    }
    // Whatever became of it, Slack is answered 200: a refusal would only be retried.
    await takeQuestion(
      options,
      {
        platform: "slack",
        channel,
        words: askWords(typeof event.text === "string" ? event.text : ""),
        inChannel: true,
        thread,
      },
      user,
      event.channel_type === "im" || event.channel_type === "mpim",
    );
    return reply(200, '{"ok":true}');
  }
}
