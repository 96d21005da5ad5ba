/**
 * Slack's request signing (api.slack.com/docs/verifying-requests-from-slack): HMAC-SHA256 of
 * `v0:{X-Slack-Request-Timestamp}:{raw body}` with the app's signing secret, hex, prefixed `v0=`,
 * compared in constant time; a timestamp more than five minutes from now is a replay.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { ConnectorError } from "./errors.js";
import { header, type RequestHeaders } from "./receive.js";

const SLACK_SIGNATURE_HEADER = "X-Slack-Signature";
const SLACK_TIMESTAMP_HEADER = "X-Slack-Request-Timestamp";
/** Slack's own replay window, and the one its documentation's example uses. */
const SLACK_MAX_SKEW_SECONDS = 5 * 60;

const SIGNATURE = /^v0=[0-9a-f]{64}$/;
const TIMESTAMP = /^\d{1,12}$/;

/** The `X-Slack-Signature` value Slack would send for this body at this timestamp. */
export function signSlackRequest(
  signingSecret: string,
  timestamp: string | number,
  rawBody: Buffer | string,
): string {
  const hmac = createHmac("sha256", signingSecret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(rawBody);
  return `v0=${hmac.digest("hex")}`;
}

export interface VerifyOptions {
  headers: RequestHeaders;
  /** The body exactly as received: re-serialised JSON would not match. */
  rawBody: Buffer;
  signingSecret: string;
  /** Milliseconds since the epoch. */
  now?: number;
}

/**
 * Throws a {@link ConnectorError} naming the header at fault unless the request carries Slack's
 * valid signature of this body, made within five minutes of `now`. The timestamp is checked
 * before the signature: a stale request is refused without computing the HMAC.
 */
export function verifySlackRequest(options: VerifyOptions): void {
  const timestamp = header(options.headers, SLACK_TIMESTAMP_HEADER);
  const signature = header(options.headers, SLACK_SIGNATURE_HEADER);
  if (timestamp === undefined) {
    throw new ConnectorError("CONNECTOR_HEADER_MISSING", SLACK_TIMESTAMP_HEADER, "missing");
  }
  if (!TIMESTAMP.test(timestamp)) {
    throw new ConnectorError(
      "CONNECTOR_HEADER_MALFORMED",
      SLACK_TIMESTAMP_HEADER,
      "expected unix seconds",
    );
  }
  if (signature === undefined) {
    throw new ConnectorError("CONNECTOR_HEADER_MISSING", SLACK_SIGNATURE_HEADER, "missing");
  }
  if (!SIGNATURE.test(signature)) {
    throw new ConnectorError(
      "CONNECTOR_HEADER_MALFORMED",
      SLACK_SIGNATURE_HEADER,
      "expected v0= and 64 hex digits",
    );
  }
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  const skew = Math.abs(nowSeconds - Number(timestamp));
  if (skew > SLACK_MAX_SKEW_SECONDS) {
    throw new ConnectorError(
      "CONNECTOR_STALE_REQUEST",
      SLACK_TIMESTAMP_HEADER,
      `${skew} s from now, more than ${SLACK_MAX_SKEW_SECONDS} s (a replay, or a wrong clock)`,
    );
  }
  const expected = Buffer.from(signSlackRequest(options.signingSecret, timestamp, options.rawBody));
  // Both are `v0=` and 64 hex digits here, so the lengths match, as timingSafeEqual requires.
  if (!timingSafeEqual(expected, Buffer.from(signature))) {
    throw new ConnectorError(
      "CONNECTOR_BAD_SIGNATURE",
      SLACK_SIGNATURE_HEADER,
      "does not match the body signed with the signing secret",
    );
  }
}
