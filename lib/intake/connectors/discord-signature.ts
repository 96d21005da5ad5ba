/**
 * Discord's interaction signing (discord.com/developers/docs/interactions/overview): Ed25519 over
 * `{X-Signature-Timestamp}{raw body}`, verified with the application's public key (32 bytes, hex,
 * from the developer portal). Node's crypto verifies Ed25519 once the raw key is wrapped as SPKI.
 * Discord requires a 401 for a request unsigned or badly signed, and tests that it gets one.
 */
import { createPublicKey, type KeyObject, verify } from "node:crypto";
import { ConnectorError } from "./errors.js";
import { header, type RequestHeaders } from "./receive.js";

const SIGNATURE_HEADER = "X-Signature-Ed25519";
const TIMESTAMP_HEADER = "X-Signature-Timestamp";
/** The DER prefix of an Ed25519 SubjectPublicKeyInfo, before its 32 raw bytes (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const PUBLIC_KEY = /^[0-9a-fA-F]{64}$/;
const SIGNATURE = /^[0-9a-fA-F]{128}$/;
const TIMESTAMP = /^\d{1,12}$/;
/** A replay window as Slack's: Discord signs the timestamp, so an old request is refused. */
const MAX_SKEW_SECONDS = 5 * 60;

/** The application's public key (64 hex digits) as a key Node verifies with. */
export function discordPublicKey(hex: string): KeyObject {
  const trimmed = hex.trim();
  if (!PUBLIC_KEY.test(trimmed)) {
    throw new ConnectorError("CONNECTOR_BAD_KEY", "public key", "expected 64 hex digits");
  }
  return createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(trimmed, "hex")]),
    format: "der",
    type: "spki",
  });
}

export interface DiscordVerifyOptions {
  headers: RequestHeaders;
  rawBody: Buffer;
  publicKey: KeyObject;
  /** Milliseconds since the epoch. */
  now?: number;
}

/**
 * Throws a {@link ConnectorError} naming the header at fault unless the request carries a valid
 * signature of this body by the application's key, made within five minutes of `now`.
 */
export function verifyDiscordRequest(options: DiscordVerifyOptions): void {
  const signature = header(options.headers, SIGNATURE_HEADER);
  const timestamp = header(options.headers, TIMESTAMP_HEADER);
  if (signature === undefined) {
    throw new ConnectorError("CONNECTOR_HEADER_MISSING", SIGNATURE_HEADER, "missing");
  }
  if (timestamp === undefined) {
    throw new ConnectorError("CONNECTOR_HEADER_MISSING", TIMESTAMP_HEADER, "missing");
  }
  if (!SIGNATURE.test(signature)) {
    throw new ConnectorError(
      "CONNECTOR_HEADER_MALFORMED",
      SIGNATURE_HEADER,
      "expected 128 hex digits",
    );
  }
  if (!TIMESTAMP.test(timestamp)) {
    throw new ConnectorError(
      "CONNECTOR_HEADER_MALFORMED",
      TIMESTAMP_HEADER,
      "expected unix seconds",
    );
  }
  const skew = Math.abs(Math.floor((options.now ?? Date.now()) / 1000) - Number(timestamp));
  if (skew > MAX_SKEW_SECONDS) {
    throw new ConnectorError(
      "CONNECTOR_STALE_REQUEST",
      TIMESTAMP_HEADER,
      `${skew} s from now, more than ${MAX_SKEW_SECONDS} s (a replay, or a wrong clock)`,
    );
  }
  const signed = Buffer.concat([Buffer.from(timestamp), options.rawBody]);
  if (!verify(null, signed, options.publicKey, Buffer.from(signature, "hex"))) {
    throw new ConnectorError(
      "CONNECTOR_BAD_SIGNATURE",
      SIGNATURE_HEADER,
      "does not match the body signed with the application's key",
    );
  }
}
