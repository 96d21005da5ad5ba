/**
 * What every receiver shares: the HTTP shapes, its counts and log, and the last step, which
 * claims the platform's event id (a retry of a sent event is acknowledged, not sent again; a
 * retry of one still in flight is refused, so that the platform tries again) and sends its lines
 * to the ingest queue, giving the claim back when the send fails.
 */

import type { ChatChangeInput, ChatMessageInput } from "../ingest/index.js";
import type { ClaimOutcome, EventClaims } from "./claims.js";
import { ConnectorError } from "./errors.js";

/** Headers by lower-case name, as Lambda's Function URL event gives them (any case accepted). */
export type RequestHeaders = Readonly<Record<string, string | undefined>>;

/** A header by name, whatever its case. */
export function header(headers: RequestHeaders, name: string): string | undefined {
  const lower = name.toLowerCase();
  if (headers[lower] !== undefined) return headers[lower];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === lower) return value;
  }
  return undefined;
}

/** A line for the ingest queue: a new message, an edit or a deletion. */
export type IngestLine = ChatMessageInput | ChatChangeInput;

export interface HttpRequest {
  headers: RequestHeaders;
  /** The raw body, as signed. */
  body: Buffer;
}

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** The receiver's counts: every request, and what became of it. */
export type ConnectorMetric =
  | "EventsReceived"
  | "EventsIngested"
  | "EventsDuplicate"
  | "EventsInFlight"
  | "EventsIgnored"
  | "EventsRefused"
  | "EventsFailed";

/** Structured logging; attributes carry ids, codes and counts, never message text. */
export interface ConnectorLog {
  info(message: string, attributes: Record<string, unknown>): void;
  warn(message: string, attributes: Record<string, unknown>): void;
  error(message: string, attributes: Record<string, unknown>): void;
}

/**
 * Which chats a receiver takes: its public URL reaches every chat the bot or app is in,
 * strangers' private chats too. `channels`: only these (the platform's ids), else every group
 * chat; `privateChats`: also one-to-one chats and DMs (off by default: a person's private
 * messages are not a community's to analyse).
 */
export interface ChatScope {
  channels?: ReadonlySet<string>;
  privateChats?: boolean;
}

/** Why a chat is outside `scope` (for the log), or undefined when it is in. */
export function outOfScope(
  scope: ChatScope | undefined,
  channel: string,
  isPrivate: boolean,
): "not listed" | "private" | undefined {
  if (scope?.channels !== undefined && !scope.channels.has(channel)) return "not listed";
  if (isPrivate && !scope?.privateChats) return "private";
  return undefined;
}

/** What {@link take} needs of a receiver's options. */
export interface TakeOptions {
  claims: EventClaims;
  /** Sends one ingest line (one queue message body). */
  send: (line: IngestLine) => Promise<void>;
  metrics: { add(name: ConnectorMetric, value: number): void };
  log: ConnectorLog;
}

/**
 * The longest body a receiver reads: far over any Slack event or Telegram update (a message is
 * at most 40,000 or 4,096 characters), far under a function URL's 6 MB. A longer one is refused
 * before its HMAC is computed or its JSON parsed, so that a flood of large bodies costs little.
 */
export const MAX_EVENT_BODY_BYTES = 1024 * 1024;

/** @throws ConnectorError (`CONNECTOR_BODY_TOO_LARGE`) for a body over the bound. */
export function checkBodySize(body: Buffer): void {
  if (body.length <= MAX_EVENT_BODY_BYTES) return;
  throw new ConnectorError(
    "CONNECTOR_BODY_TOO_LARGE",
    "body",
    `${body.length} bytes, over the ${MAX_EVENT_BODY_BYTES} an event may take`,
  );
}

/** The status a refusal answers: 400 for a body at fault, 413 too large, 401 otherwise. */
export function refusalStatus(error: ConnectorError): number {
  if (error.code === "CONNECTOR_MALFORMED_BODY") return 400;
  if (error.code === "CONNECTOR_BODY_TOO_LARGE") return 413;
  return 401;
}

/**
 * Refusals logged in aggregate: a public URL that is flooded or probed would otherwise write a
 * log line per request, and pay for each. The first refusal of a window is logged as it comes
 * (its code and field); the others are counted by code and field and logged as one line when
 * the next refusal comes after the window. `EventsRefused` still counts every one.
 */
export class RefusalLog {
  private readonly counted = new Map<string, number>();
  private windowStart: number | undefined;

  constructor(
    private readonly log: ConnectorLog,
    private readonly now: () => number = Date.now,
    private readonly windowMs = 60_000,
  ) {}

  refused(error: ConnectorError, attributes: Record<string, unknown> = {}): void {
    const now = this.now();
    if (this.windowStart !== undefined && now - this.windowStart >= this.windowMs) {
      this.flush();
    }
    if (this.windowStart === undefined) {
      this.windowStart = now;
      this.log.warn("request refused", { code: error.code, field: error.field, ...attributes });
      return;
    }
    const key = `${error.code} ${error.field}`;
    this.counted.set(key, (this.counted.get(key) ?? 0) + 1);
  }

  private flush(): void {
    if (this.counted.size > 0) {
      this.log.warn("requests refused", {
        since: new Date(this.windowStart as number).toISOString(),
        refused: Object.fromEntries(this.counted),
      });
    }
    this.counted.clear();
    this.windowStart = undefined;
  }
}

export const reply = (statusCode: number, body: string, contentType = "application/json") => ({
  statusCode,
  headers: { "content-type": contentType },
  body,
});
export const OK = () => reply(200, '{"ok":true}');
export async function take(
  options: TakeOptions,
  eventId: string,
  lines: IngestLine[],
  retry: Record<string, string | undefined>,
): Promise<HttpResponse> {
  const { metrics, log } = options;
  let outcome: ClaimOutcome;
  try {
    outcome = await options.claims.claim(eventId);
  } catch (error) {
    metrics.add("EventsFailed", 1);
    log.error("event claim failed", { eventId, error: (error as Error).name, ...retry });
    return reply(500, '{"error":"claim failed"}');
  }
  if (outcome === "sent") {
    metrics.add("EventsDuplicate", 1);
    log.info("event already taken", { eventId, ...retry });
    return OK();
  }
  if (outcome === "pending") {
    // Another attempt holds the event and may still fail: acknowledging this retry could lose
    // it, so the platform is asked to retry once more.
    metrics.add("EventsInFlight", 1);
    log.info("event still in flight", { eventId, ...retry });
    return reply(503, '{"error":"event in flight, retry"}');
  }
  try {
    for (const line of lines) await options.send(line);
  } catch (error) {
    metrics.add("EventsFailed", 1);
    // Given back, so that the platform's retry is taken; if that fails too, the pending claim's
    // lease runs out and a later retry takes it over.
    const released = await options.claims.release(eventId).then(
      () => true,
      () => false,
    );
    log.error("send to the ingest queue failed", {
      eventId,
      released,
      error: (error as Error).name,
      ...retry,
    });
    return reply(500, '{"error":"send failed"}');
  }
  // Left pending if this fails: the lease runs out and a retry sends again (ingestion keys
  // messages by id, so a second send stores nothing new).
  const settled = await options.claims.settle(eventId).then(
    () => true,
    () => false,
  );
  metrics.add("EventsIngested", 1);
  log.info("event sent", {
    settled,
    eventId,
    ops: lines.map((l) => l.op ?? "add"),
    ids: lines.map((l) => String(l.id)),
    ...retry,
  });
  return OK();
}
