/**
 * The connectors' error family: a stable `code` and a literal `name` (bundling renames classes).
 * A refused request names the header or field at fault, never the body or the secret.
 */
export class ConnectorError extends Error {
  override readonly name: string = "ConnectorError";
  readonly code: ConnectorErrorCode;
  /** The header or field at fault (`X-Slack-Signature`, `event_id`). */
  readonly field: string;

  constructor(
    code: ConnectorErrorCode,
    field: string,
    problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${field}: ${problem}`, options);
    this.code = code;
    this.field = field;
  }
}

export type ConnectorErrorCode =
  /** A header the platform always sends is absent. */
  | "CONNECTOR_HEADER_MISSING"
  /** A header is there but not in the platform's form. */
  | "CONNECTOR_HEADER_MALFORMED"
  /** The request's timestamp is too far from now: a replay, or a badly wrong clock. */
  | "CONNECTOR_STALE_REQUEST"
  /** The signature or token does not match: not from the platform, or altered. */
  | "CONNECTOR_BAD_SIGNATURE"
  /** A verified body that is not the platform's JSON envelope. */
  | "CONNECTOR_MALFORMED_BODY"
  /** A body longer than any event the platform sends: refused before it is hashed or parsed. */
  | "CONNECTOR_BODY_TOO_LARGE"
  /** The configured key to verify with is not one (Discord's public key): a setup fault. */
  | "CONNECTOR_BAD_KEY";
