/**
 * Slack Events API payloads: the envelope (`url_verification`, `event_callback`) and a message
 * event as ingest lines, rendered as the Slack export reader renders them (lib/intake/exports), so that
 * a channel imported from an export and then kept current live reads the same.
 */
import {
  type SlackNames,
  type SlackRaw,
  slackAuthor,
  slackText,
  slackTsMs,
} from "../exports/index.js";
import type { ChatMessageInput } from "../ingest/index.js";
import { ConnectorError } from "./errors.js";
import type { IngestLine } from "./receive.js";

export type SlackEnvelope =
  | { type: "url_verification"; challenge: string }
  | { type: "event_callback"; eventId: string; teamId?: string; event: SlackEvent }
  /** Anything else Slack sends (`app_rate_limited`): acknowledged, nothing ingested. */
  | { type: "other"; envelopeType: string };

/** The inner event's fields the mapping reads. */
export interface SlackEvent extends SlackRaw {
  type?: unknown;
  channel?: unknown;
  message?: SlackEvent;
  previous_message?: SlackEvent;
  deleted_ts?: unknown;
  edited?: { ts?: unknown; user?: unknown };
  /** Slack sends many more fields (blocks, reactions, reply counts): unread. */
  [field: string]: unknown;
}

const malformed = (field: string, problem: string) =>
  new ConnectorError("CONNECTOR_MALFORMED_BODY", field, problem);

/** The envelope of a verified body; a {@link ConnectorError} naming the field at fault. */
export function parseSlackEnvelope(rawBody: Buffer | string): SlackEnvelope {
  let value: unknown;
  try {
    value = JSON.parse(rawBody.toString());
  } catch {
    throw malformed("body", "not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw malformed("body", "not a JSON object");
  }
  const body = value as Record<string, unknown>;
  if (typeof body.type !== "string") throw malformed("type", "expected a string");
  if (body.type === "url_verification") {
    if (typeof body.challenge !== "string") throw malformed("challenge", "expected a string");
    return { type: "url_verification", challenge: body.challenge };
  }
  if (body.type !== "event_callback") return { type: "other", envelopeType: body.type };
  if (typeof body.event_id !== "string" || body.event_id === "") {
    throw malformed("event_id", "expected a non-empty string");
  }
  if (typeof body.event !== "object" || body.event === null || Array.isArray(body.event)) {
    throw malformed("event", "expected an object");
  }
  return {
    type: "event_callback",
    eventId: body.event_id,
    ...(typeof body.team_id === "string" ? { teamId: body.team_id } : {}),
    event: body.event as SlackEvent,
  };
}

const NO_NAMES: SlackNames = { users: new Map(), channels: new Map() };
const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined;

/**
 * What ingestion is told of a message event: one line (a message, an edit, a deletion) or none
 * (another event type, a hidden subtype, a change that leaves the text as it was: Slack sends
 * `message_changed` for unfurls and a parent's reply count too). `names` renders mentions and
 * authors by name when known (else by id).
 */
export function slackEventLines(event: SlackEvent, names: SlackNames = NO_NAMES): IngestLine[] {
  if (event.type !== "message") return [];
  const channel = text(event.channel);
  if (channel === undefined) return [];
  const subtype = typeof event.subtype === "string" ? event.subtype : undefined;
  if (subtype === "message_changed") return changed(event, channel, names);
  if (subtype === "message_deleted") {
    const id = text(event.deleted_ts) ?? text(event.previous_message?.ts);
    return id === undefined ? [] : [{ op: "delete", channel, id }];
  }
  if (event.hidden === true) return [];
  const message = newMessage(event, channel, subtype, names);
  return message === undefined ? [] : [message];
}

function newMessage(
  event: SlackEvent,
  channel: string,
  subtype: string | undefined,
  names: SlackNames,
): ChatMessageInput | undefined {
  const ms = slackTsMs(event.ts);
  if (ms === undefined) return undefined;
  // A person's message names its author, as the export reader requires.
  const author = slackAuthor(event, subtype, names);
  if (author === undefined) return undefined;
  const line: ChatMessageInput = {
    id: event.ts as string,
    ts: ms,
    channel,
    user: author.user,
    text: slackText(event, names, subtype),
    kind: author.kind,
    platform: "slack",
  };
  if (author.userId !== undefined) line.userId = author.userId;
  const thread = text(event.thread_ts);
  if (thread !== undefined && thread !== event.ts && slackTsMs(thread) !== undefined) {
    line.thread = thread;
  }
  return line;
}

/** `message_changed`: an edit of the message's text when it changed, dated by the edit. */
function changed(event: SlackEvent, channel: string, names: SlackNames): IngestLine[] {
  const message = event.message;
  const id = text(message?.ts);
  if (message === undefined || id === undefined) return [];
  // A deleted parent that keeps its replies becomes a tombstone: a deletion of its words.
  if (message.subtype === "tombstone") return [{ op: "delete", channel, id }];
  const subtype = typeof message.subtype === "string" ? message.subtype : undefined;
  const after = slackText(message, names, subtype);
  const previous = event.previous_message;
  if (previous !== undefined) {
    const before = slackText(
      previous,
      names,
      typeof previous.subtype === "string" ? previous.subtype : undefined,
    );
    if (before === after) return [];
  }
  const editedAt = slackTsMs(message.edited?.ts) ?? slackTsMs(event.ts);
  if (editedAt === undefined) return [];
  return [{ op: "edit", channel, id, text: after, editedAt }];
}
