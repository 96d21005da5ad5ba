/**
 * The Slack Events API receiver's logic, apart from Lambda: verify, answer `url_verification`,
 * map a message event to its ingest line, claim the event (a retry is acknowledged, not sent
 * again) and hand the line to the ingest queue. Nothing is ingested inline: Slack wants a 2xx
 * within 3 s, and the queue's consumer is the one writer of the tables.
 */
import type { SlackNames } from "../exports/index.js";
import { ConnectorError } from "./errors.js";
import {
  type ChatScope,
  checkBodySize,
  type HttpRequest,
  type HttpResponse,
  header,
  type IngestLine,
  OK,
  outOfScope,
  RefusalLog,
  refusalStatus,
  reply,
  type TakeOptions,
  take,
} from "./receive.js";
import { parseSlackEnvelope, slackEventLines } from "./slack-events.js";
import { verifySlackRequest } from "./slack-signature.js";
import { slackUserIds } from "./slack-users.js";

export interface SlackReceiverOptions extends TakeOptions {
  /** The app's signing secret (cached by the caller). */
  signingSecret: () => Promise<string>;
  /** Names for the user ids an event carries (`SlackUserNames`); else authors stay ids. */
  userNames?: (ids: string[]) => Promise<SlackNames>;
  now?: () => number;
  /** The channels taken (default: every channel, DMs and group DMs left out). */
  scope?: ChatScope;
}

/** A request handler: each outcome is a response, logged and counted (only a bug throws). */
export function slackReceiver(options: SlackReceiverOptions) {
  const { metrics, log } = options;
  const refusals = new RefusalLog(log, options.now);
  const refuse = (error: ConnectorError, attributes: Record<string, unknown> = {}) => {
    metrics.add("EventsRefused", 1);
    refusals.refused(error, attributes);
    return reply(refusalStatus(error), JSON.stringify({ error: error.code }));
  };
  return async (request: HttpRequest): Promise<HttpResponse> => {
    metrics.add("EventsReceived", 1);
    const retry = {
      retryNum: header(request.headers, "X-Slack-Retry-Num"),
      retryReason: header(request.headers, "X-Slack-Retry-Reason"),
    };
    try {
      checkBodySize(request.body);
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      return refuse(error, retry);
    }
    let secret: string;
    try {
      secret = await options.signingSecret();
    } catch (error) {
      // Not the sender's fault: a 5xx, so that Slack retries once the secret can be read.
      metrics.add("EventsFailed", 1);
      log.error("signing secret unreadable", { error: (error as Error).name, ...retry });
      return reply(500, '{"error":"signing secret unreadable"}');
    }
    let lines: IngestLine[];
    let eventId: string;
    try {
      verifySlackRequest({
        headers: request.headers,
        rawBody: request.body,
        signingSecret: secret,
        now: options.now?.(),
      });
      const envelope = parseSlackEnvelope(request.body);
      if (envelope.type === "url_verification") {
        log.info("url verification answered", {});
        return reply(200, envelope.challenge, "text/plain");
      }
      if (envelope.type === "other") {
        metrics.add("EventsIgnored", 1);
        log.info("envelope ignored", { envelopeType: envelope.envelopeType, ...retry });
        return OK();
      }
      eventId = envelope.eventId;
      const { event } = envelope;
      const channel = typeof event.channel === "string" ? event.channel : "";
      // A DM's channel_type is im, a group DM's mpim (their ids start with D and G too).
      const outside = outOfScope(
        options.scope,
        channel,
        event.channel_type === "im" || event.channel_type === "mpim",
      );
      if (outside !== undefined) {
        metrics.add("EventsIgnored", 1);
        log.info("event outside the channels taken", { eventId, reason: outside, ...retry });
        return OK();
      }
      // Names are a nicety: a lookup that fails leaves the ids, never the event.
      const names = await options
        .userNames?.(slackUserIds(event.user, event.text, event.message?.user, event.message?.text))
        .catch(() => undefined);
      lines = slackEventLines(event, names);
      if (lines.length === 0) {
        metrics.add("EventsIgnored", 1);
        log.info("event ignored", { eventId, ...describe(envelope.event), ...retry });
        return OK();
      }
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      return refuse(error, retry);
    }
    return take(options, eventId, lines, retry);
  };
}

/** What is logged of an ignored event: its type and subtype, never its text. */
function describe(event: { type?: unknown; subtype?: unknown }) {
  return {
    eventType: typeof event.type === "string" ? event.type : undefined,
    subtype: typeof event.subtype === "string" ? event.subtype : undefined,
  };
}
