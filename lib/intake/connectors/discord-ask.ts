/**
 * The Discord interactions endpoint for the `/ask` application command: each request verified
 * with the application's Ed25519 key (401 when unsigned or badly signed, as Discord requires),
 * PING answered with PONG, the command answered with a deferred response (type 5: Discord shows
 * "thinking…"), and the question handed on; its answer edits that response through the
 * interaction's webhook. Only the asker sees it unless the command's `public` option is true.
 * The "Mark as answer" message command (and "Reopen question", "Hide question") arrives here
 * too: deferred, only the person sees what became of it, and the mark handed on.
 */
import type { KeyObject } from "node:crypto";
import {
  type AskReceiverOptions,
  type AskTaken,
  askRefusals,
  type MarkAction,
  notTakenText,
  takeMark,
  takeQuestion,
  verifierOf,
} from "./ask.js";
import { askWords } from "./ask-words.js";
import { verifyDiscordRequest } from "./discord-signature.js";
import { ConnectorError } from "./errors.js";
import { checkBodySize, type HttpRequest, type HttpResponse, reply } from "./receive.js";

export interface DiscordAskOptions extends AskReceiverOptions {
  /** The application's public key (`discordPublicKey`), read by the caller. */
  publicKey: () => Promise<KeyObject>;
  /** The command's name (default `ask`). */
  command?: string;
}

/** The message commands' names, as `discord-ask --mark` registers them, by action. */
const MARK_COMMANDS: Readonly<Record<string, MarkAction>> = {
  "Mark as answer": "answered",
  "Reopen question": "reopen",
  "Hide question": "hidden",
};

/** Interaction, command and response types, and the EPHEMERAL message flag. */
const PING = 1;
const APPLICATION_COMMAND = 2;
const MESSAGE_COMMAND = 3;
const PONG = 1;
const CHANNEL_MESSAGE = 4;
const DEFERRED_CHANNEL_MESSAGE = 5;
const EPHEMERAL = 64;
/** A DM's and a group DM's channel types. */
const PRIVATE_CHANNEL_TYPES = new Set([1, 3]);
/** A thread's channel types (announcement, public, private). */
const THREAD_TYPES = new Set([10, 11, 12]);
const SNOWFLAKE = /^\d{15,21}$/;

interface Interaction {
  type?: unknown;
  application_id?: unknown;
  token?: unknown;
  guild_id?: unknown;
  channel_id?: unknown;
  channel?: { type?: unknown; parent_id?: unknown };
  member?: { user?: { id?: unknown } };
  user?: { id?: unknown };
  data?: {
    name?: unknown;
    type?: unknown;
    options?: { name?: unknown; value?: unknown }[];
    /** A message command's: the message chosen, and it as Discord resolved it. */
    target_id?: unknown;
    resolved?: { messages?: Record<string, { message_reference?: { message_id?: unknown } }> };
  };
}

const json = (value: unknown) => reply(200, JSON.stringify(value));
const text = (value: unknown) => (typeof value === "string" ? value : "");

/** The interaction of a verified body; a {@link ConnectorError} naming the field at fault. */
function parseInteraction(body: Buffer): Interaction {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    throw new ConnectorError("CONNECTOR_MALFORMED_BODY", "body", "not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConnectorError("CONNECTOR_MALFORMED_BODY", "body", "not a JSON object");
  }
  return value as Interaction;
}

/** A request handler: every outcome is a response; only a bug throws. */
export function discordAskReceiver(options: DiscordAskOptions) {
  const { metrics, log } = options;
  const refuse = askRefusals(options);
  const command = options.command ?? "ask";
  return async (request: HttpRequest): Promise<HttpResponse> => {
    metrics.add("AsksReceived", 1);
    let interaction: Interaction;
    try {
      checkBodySize(request.body);
      const key = await verifierOf(options, "public key", options.publicKey);
      if ("failed" in key) return key.failed;
      verifyDiscordRequest({
        headers: request.headers,
        rawBody: request.body,
        publicKey: key.value,
        now: options.now?.(),
      });
      interaction = parseInteraction(request.body);
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      return refuse(error);
    }
    if (interaction.type === PING) {
      log.info("ping answered", {});
      return json({ type: PONG });
    }
    const channel = text(interaction.channel_id);
    const applicationId = text(interaction.application_id);
    const token = text(interaction.token);
    const person = text(interaction.member?.user?.id) || text(interaction.user?.id);
    const guild = text(interaction.guild_id);
    const isPrivate = guild === "" || PRIVATE_CHANNEL_TYPES.has(Number(interaction.channel?.type));
    const { data } = interaction;
    const action = typeof data?.name === "string" ? MARK_COMMANDS[data.name] : undefined;
    if (
      interaction.type === APPLICATION_COMMAND &&
      data?.type === MESSAGE_COMMAND &&
      action !== undefined &&
      Object.hasOwn(MARK_COMMANDS, String(data.name))
    ) {
      const target = text(data.target_id);
      if (![channel, applicationId, target, person].every((id) => SNOWFLAKE.test(id)) || !token) {
        metrics.add("AsksIgnored", 1);
        log.info("a mark without its ids", {});
        return reply(400, '{"error":"not a mark"}');
      }
      const replyTo = text(data.resolved?.messages?.[target]?.message_reference?.message_id);
      // A thread's messages are stored in its parent channel, the thread's id as their thread.
      const parent = text(interaction.channel?.parent_id);
      const inThread =
        THREAD_TYPES.has(Number(interaction.channel?.type)) && SNOWFLAKE.test(parent);
      const taken = await takeMark(
        options,
        {
          platform: "discord",
          channel: inThread ? parent : channel,
          messageId: target,
          ...(inThread && { thread: channel }),
          action,
          by: person,
          ...(SNOWFLAKE.test(replyTo) && { replyTo }),
          applicationId,
          token,
        },
        person,
        isPrivate,
      );
      return taken.taken ? deferred(true) : notTaken(taken);
    }
    if (
      interaction.type !== APPLICATION_COMMAND ||
      interaction.data?.name !== command ||
      !SNOWFLAKE.test(channel) ||
      !SNOWFLAKE.test(applicationId) ||
      token === ""
    ) {
      metrics.add("AsksIgnored", 1);
      log.info("not the ask command", { type: Number(interaction.type) || undefined });
      return reply(400, '{"error":"not the ask command"}');
    }
    const option = (name: string) => interaction.data?.options?.find((o) => o.name === name)?.value;
    const isPublic = option("public") === true;
    const taken = await takeQuestion(
      options,
      {
        platform: "discord",
        channel,
        words: askWords(text(option("question"))),
        ...(SNOWFLAKE.test(guild) && { guild }),
        applicationId,
        token,
      },
      person,
      isPrivate,
    );
    return taken.taken ? deferred(!isPublic) : notTaken(taken);
  };
}

/** Discord shows "thinking…" until the follow-up edits it; only to the person when `ephemeral`. */
const deferred = (ephemeral: boolean) =>
  json({ type: DEFERRED_CHANNEL_MESSAGE, data: { flags: ephemeral ? EPHEMERAL : 0 } });

const notTaken = (taken: Exclude<AskTaken, { taken: true }>) =>
  json({
    type: CHANNEL_MESSAGE,
    data: { content: notTakenText(taken), flags: EPHEMERAL, allowed_mentions: { parse: [] } },
  });
