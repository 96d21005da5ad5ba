/** Slack requests as Slack signs them, for the receiver's tests: envelopes and message events. */
import { signSlackRequest } from "convoseg/connectors";

export const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
/** 2025-01-10T03:10:30Z in Slack's seconds. */
export const NOW_SECONDS = 1_736_478_630;
export const NOW = NOW_SECONDS * 1000;

/** A body signed at `timestamp` with `secret`, as headers a Function URL hands over. */
export function signed(
  body: string | Buffer,
  options: { secret?: string; timestamp?: number; headers?: Record<string, string> } = {},
) {
  const timestamp = options.timestamp ?? NOW_SECONDS;
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return {
    body: raw,
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": signSlackRequest(options.secret ?? SECRET, timestamp, raw),
      ...options.headers,
    },
  };
}

/** An `event_callback` envelope around `event`. */
export function envelope(event: Record<string, unknown>, eventId = "Ev0001"): string {
  return JSON.stringify({
    token: "unused",
    team_id: "T0001",
    api_app_id: "A0001",
    type: "event_callback",
    event_id: eventId,
    event_time: NOW_SECONDS,
    event,
  });
}

/** A plain message in channel C0001 by U0001. */
export const plain = (over: Record<string, unknown> = {}) => ({
  type: "message",
  channel: "C0001",
  user: "U0001",
  text: "hello <@U0002>, see <https://example.com|the docs> in <#C0002|general>",
  ts: "1736478630.905399",
  ...over,
});
