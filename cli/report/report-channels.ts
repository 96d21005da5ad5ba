/**
 * `report --channel`: the report of some channels only, each given by its id or, where it is
 * unambiguous, its name (the `channelName` its messages carry: the workspace's messages table,
 * or the `--input` messages).
 */
import type { ReportInput } from "convoseg/report";
import { type ChannelDirectory, channelArgument } from "../shared/channel-names.js";
import { escapeControls } from "../shared/format.js";
import type { CommandIO } from "../shared/io.js";
import { suggestChannels } from "../shared/near-channels.js";

type Parts = Pick<ReportInput, "segments" | "candidates" | "messages">;

/** The channels of a report's input files, named as the latest of their input messages says. */
export function inputDirectory(input: Parts): ChannelDirectory {
  const names = new Map<string, { ts: number; name: string }>();
  for (const message of input.messages ?? []) {
    const known = names.get(message.channel);
    if (message.channelName === undefined || (known !== undefined && known.ts > message.ts)) {
      continue;
    }
    names.set(message.channel, { ts: message.ts, name: message.channelName });
  }
  const ids = new Set([
    ...input.segments.map((s) => s.channel),
    ...(input.messages ?? []).map((m) => m.channel),
  ]);
  return {
    conversations: async () => [...ids],
    nameOf: async (channel) => names.get(channel)?.name,
  };
}

/**
 * `input` with only the channels `given` names (all of it when none is given); undefined once it
 * has said that a name is ambiguous or that the input has no such channel (with the channels
 * near it): a page of nothing is not what was asked for.
 */
export async function keepChannels<T extends Parts>(
  input: T,
  given: readonly string[] | undefined,
  directory: ChannelDirectory,
  io: CommandIO,
): Promise<T | undefined> {
  if (given === undefined || given.length === 0) return input;
  const kept = new Set<string>();
  for (const argument of given) {
    const channel = (await channelArgument("report", argument, directory, io))?.channel;
    if (channel === undefined) return undefined;
    kept.add(channel);
  }
  const present = new Set(await directory.conversations());
  const missing = [...kept].filter((channel) => !present.has(channel));
  for (const channel of missing) {
    io.stderr.write(`report: no channel ${escapeControls(JSON.stringify(channel))} to report\n`);
    suggestChannels("report", "report --channel", channel, present, io);
  }
  if (missing.length > 0) return undefined;
  return {
    ...input,
    segments: input.segments.filter((s) => kept.has(s.channel)),
    candidates: input.candidates?.filter((c) => kept.has(c.channel)),
    messages: input.messages?.filter((m) => kept.has(m.channel)),
  };
}
