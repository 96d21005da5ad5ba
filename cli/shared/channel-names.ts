/**
 * A channel given by its display name where a command expects its id: `topics general` for the
 * Slack channel `C024BE91L`. The name is what the channel's messages carry (`channelName`,
 * issue 22 §1), read from the messages table. A name that several channels carry is refused with
 * their ids rather than guessed, and so is an id that is also another channel's name (the
 * sample's `random` beside an imported Slack `#random`); a platform's id (`C024BE91L`) is never
 * a name, and is taken as it is.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDbStore, latestChannelName } from "convoseg/history/dynamodb";
import { channelPlatform } from "convoseg/identity";
import { escapeControls, shellArg } from "./format.js";
import type { CommandIO } from "./io.js";

/** Where channels and their names are looked up. */
export interface ChannelDirectory {
  conversations(): Promise<string[]>;
  nameOf(channel: string): Promise<string | undefined>;
}

/** The channels of a messages table and the names their latest messages carry. */
export function messagesDirectory(client: DynamoDBClient, tableName: string): ChannelDirectory {
  const store = new DynamoDbStore({ client, tableName });
  return {
    conversations: () => store.conversations(),
    nameOf: (channel) => latestChannelName(client, tableName, channel),
  };
}

/**
 * A channel `given` resolves to: by name or as itself, and whether the workspace stores it (an
 * unknown id is passed on for the command to say so); or, when several channels carry it, their
 * ids.
 */
export type Resolution = Resolved | { ambiguous: string[] };
export interface Resolved {
  channel: string;
  /** What `given` was, when it was the channel's name. */
  byName?: string;
  /** Whether the channel is among the directory's conversations. */
  stored: boolean;
}

/** Names looked up at once: one Query each. */
const CONCURRENCY = 8;

/**
 * The channel `given` means: itself when it is a channel's id that no other channel carries as
 * a name (or no channel carries it as a name, so the command says what it says of an unknown
 * id); else the one channel whose name it is (with or without a leading `#`); else, when several
 * carry it (an id and others' names counted alike), their ids.
 */
export async function resolveChannel(
  given: string,
  directory: ChannelDirectory,
): Promise<Resolution> {
  const ids = await directory.conversations();
  const isId = ids.includes(given);
  if (isId && channelPlatform(given) !== undefined) return { channel: given, stored: true };
  const wanted = new Set([given, given.startsWith("#") ? given.slice(1) : `#${given}`]);
  const named: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      const name = await directory.nameOf(id);
      if (name !== undefined && wanted.has(name)) named.push(id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, ids.length) }, worker));
  if (isId) {
    const others = named.filter((id) => id !== given);
    return others.length === 0
      ? { channel: given, stored: true }
      : { ambiguous: [given, ...others].sort() };
  }
  named.sort();
  if (named.length === 1) return { channel: named[0], byName: given, stored: true };
  if (named.length > 1) return { ambiguous: named };
  return { channel: given, stored: false };
}

/**
 * The channel for a command's `given` argument (its id, and whether it is stored), saying on
 * standard error which channel a name stood for; undefined once it has said that the name is
 * ambiguous (the command then exits with the usage code).
 */
export async function channelArgument(
  prefix: string,
  given: string,
  directory: ChannelDirectory,
  io: CommandIO,
): Promise<Resolved | undefined> {
  const resolution = await resolveChannel(given, directory);
  const quoted = escapeControls(JSON.stringify(given));
  if ("ambiguous" in resolution) {
    const ids = resolution.ambiguous.map(shellArg).join(", ");
    io.stderr.write(
      `${prefix}: ${quoted} names ${resolution.ambiguous.length} channels (${ids}): give the id of one (npm start -- channels lists them)\n`,
    );
    return undefined;
  }
  if (resolution.byName !== undefined) {
    io.stderr.write(`${prefix}: ${quoted} is channel ${shellArg(resolution.channel)}\n`);
  }
  return resolution;
}
