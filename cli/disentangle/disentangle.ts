/**
 * `disentangle`: which earlier message each message of a chat input answers, and so which
 * conversation it is in, channel by channel; the reply linker (`convoseg/linker`) decides every
 * link the platform does not give.
 */
import { byChannel } from "../shared/by-channel.js";
import { type Command, command, EXIT } from "../shared/command.js";
import { linkInput } from "../shared/conversation-streams.js";
import { readChatInput, timezoneOption } from "../shared/export-input.js";
import { formatCount } from "../shared/format.js";
import {
  ASK_LINKS_OPTIONS,
  ASK_LINKS_USAGE,
  askedModel,
  channelAsker,
} from "../shared/link-advice.js";
import { Progress } from "../shared/progress.js";
import { channelOption } from "../shared/read-messages.js";
import { disentangleChannel, type LinkedChannel } from "./conversations.js";
import { formatSummary } from "./summary.js";

const DISENTANGLE_USAGE = `Usage: npm start -- disentangle <file.jsonl|export|-> [options]

Reads chat messages as JSON lines (fields: id, ts as ISO-8601 or epoch ms, optional channel,
user, userId, text, kind, replyTo, thread) or a chat export (Slack ZIP or folder,
DiscordChatExporter, Telegram, Mattermost, WhatsApp, an IRC log: see import-chat) and links each
message, channel by channel in time order, to the earlier message it answers. A replyTo (or in a thread,
the thread's root) is taken as given; every other link is inferred by the reply linker; system
lines (joins, parts) are never linked. A conversation is named by its first message, the root
its messages' parents lead to (a parent naming no message of the input is that root itself); two
a message joined (its second parent, "also") are one, named by the one whose messages in the
linker's window came first.

Prints per channel its conversations, their sizes, the links by source and its largest
conversations; with --json one line per message instead, each channel's in time order:
  {"id":"m2","conversation":"m1","parent":"m1"}
"parent" left out for a conversation's first message, "also" after it for a message that joined
two conversations into one (its second parent), and "channel" the first key when the input holds
more than one channel.

Options:
  --channel NAME    the channel of lines that name none (default: default)
  --timezone ZONE   the IANA zone of an export's times that carry none (default: this machine's)
  --ignore-links    ignore the input's replyTo and thread: infer every link
${ASK_LINKS_USAGE}
  --json            one JSON line per message instead of the summary
  --skip-invalid    report malformed lines and go on without them (default: stop, print nothing)
  -h, --help        this help`;

const DISENTANGLE_OPTIONS = {
  channel: { type: "string" },
  timezone: { type: "string" },
  "ignore-links": { type: "boolean" },
  ...ASK_LINKS_OPTIONS,
  json: { type: "boolean" },
  "skip-invalid": { type: "boolean" },
} as const;

/** `disentangle`: each message's parent and conversation, per channel of a chat input. */
export const disentangleCommand: Command = command({
  name: "disentangle",
  usage: DISENTANGLE_USAGE,
  options: DISENTANGLE_OPTIONS,
  parse: ({ positionals, values: options }) => {
    if (positionals.length !== 1) {
      throw new Error(
        positionals.length === 0
          ? "missing input file (or - for stdin)"
          : `expected one input file (got ${positionals.length}: ${positionals.map((p) => JSON.stringify(p)).join(", ")})`,
      );
    }
    return {
      model: askedModel(options),
      source: positionals[0] as string,
      channel: channelOption(options.channel),
      timezone: timezoneOption(options.timezone),
      ignoreLinks: options["ignore-links"] ?? false,
      json: options.json ?? false,
      skipInvalid: options["skip-invalid"] ?? false,
    };
  },
  run: async ({ source, channel, timezone, ignoreLinks, json, skipInvalid, model }, io) => {
    const progress = new Progress(io.stderr);
    const read = await readChatInput("disentangle", source, progress, io, {
      defaultChannel: channel,
      timezone,
      skipInvalid,
      done: "linked",
      channelNote: true,
    });
    if (read === undefined) return EXIT.failed;
    const channels = byChannel(read.messages);
    const ask = channelAsker("disentangle", model, progress, io.stderr);
    const linked: LinkedChannel[] = [];
    for (const [i, [name, messages]] of channels.entries()) {
      const status = `linking: channel ${i + 1} of ${channels.length}`;
      const advice = await ask(
        name,
        messages.map((m) => linkInput(m, ignoreLinks)),
        status,
      );
      linked.push(
        disentangleChannel(name, messages, {
          ignoreLinks,
          progress,
          status,
          choices: advice?.choices,
        }),
      );
    }
    progress.finish();
    const unknown = linked.reduce((sum, c) => sum + c.unknownParents, 0);
    if (unknown > 0) {
      io.stderr.write(
        `disentangle: ${formatCount(unknown)} replyTo or thread name${unknown === 1 ? "s" : ""} no message of ${unknown === 1 ? "its" : "their"} channel: kept as the parent, and as the conversation's id\n`,
      );
    }
    if (!json) {
      io.stdout.write(formatSummary(linked));
      return EXIT.ok;
    }
    for (const channelLines of jsonLines(linked)) io.stdout.write(channelLines);
    return EXIT.ok;
  },
});

/**
 * Each channel's JSON lines, one string per channel: `{"id","conversation","parent"}` per
 * message, `parent` left out for a root, `also` after it for a message that joined two
 * conversations, and `channel` first when there is more than one.
 */
function* jsonLines(linked: readonly LinkedChannel[]): Generator<string> {
  const several = linked.length > 1;
  for (const { channel, messages, decisions, conversations } of linked) {
    const lines = messages.map((message, i) => {
      const parent = decisions[i]?.parent;
      const also = decisions[i]?.also;
      return JSON.stringify({
        ...(several ? { channel } : {}),
        id: message.id,
        conversation: conversations[i],
        ...(parent === undefined ? {} : { parent }),
        // A message that joined two conversations: its second parent, so that the conversations
        // are the chains of the links printed, as the corpus's tools build them.
        ...(also === undefined ? {} : { also }),
      });
    });
    if (lines.length > 0) yield `${lines.join("\n")}\n`;
  }
}
