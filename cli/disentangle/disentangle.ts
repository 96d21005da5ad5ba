/**
 * `disentangle`: which earlier message each message of a chat input answers, and so which
 * conversation it is in, channel by channel; the reply linker (`convoseg/linker`) decides every
 * link the platform does not give.
 */
import type { LocalModel } from "../../local/model.js";
import { byChannel } from "../shared/by-channel.js";
import { type Command, command, EXIT } from "../shared/command.js";
import { linkInput } from "../shared/conversation-streams.js";
import { readChatInput, timezoneOption } from "../shared/export-input.js";
import { escapeControls, formatCount } from "../shared/format.js";
import { parseModelFlags } from "../shared/model-options.js";
import { Progress } from "../shared/progress.js";
import { channelOption } from "../shared/read-messages.js";
import { adviseChannel, type ChannelAdvice, commandAdvisor } from "./advice.js";
import { disentangleChannel, type LinkedChannel } from "./conversations.js";
import { formatSummary } from "./summary.js";

const DISENTANGLE_USAGE = `Usage: npm start -- disentangle <file.jsonl|export|-> [options]

Reads chat messages as JSON lines (fields: id, ts as ISO-8601 or epoch ms, optional channel,
user, userId, text, kind, replyTo, thread) or a chat export (Slack ZIP or folder,
DiscordChatExporter, Telegram, Mattermost, WhatsApp: see import-chat) and links each message,
channel by channel in time order, to the earlier message it answers. A replyTo (or in a thread,
the thread's root) is taken as given; every other link is inferred by the reply linker; system
lines (joins, parts) are never linked. A conversation is named by its first message, the root
its messages' parents lead to (a parent naming no message of the input is that root itself).

Prints per channel its conversations, their sizes, the links by source and its largest
conversations; with --json one line per message instead, each channel's in time order:
  {"id":"m2","conversation":"m1","parent":"m1"}
"parent" left out for a conversation's first message, and "channel" the first key when the
input holds more than one channel.

Options:
  --channel NAME    the channel of lines that name none (default: default)
  --timezone ZONE   the IANA zone of an export's times that carry none (default: this machine's)
  --ignore-links    ignore the input's replyTo and thread: infer every link
  --ask-links       ask a model about the links the linker is least sure of, in batches; the
                    answers among the options shown are taken, and a batch that fails keeps the
                    linker's own (docs/conversations.md, "Asking a model")
  --extractor E     with --ask-links: openai (default) or bedrock
  --llm-endpoint U  with --ask-links: the OpenAI-compatible base URL (API key from
                    OPENAI_API_KEY, none needed on this machine), or a Bedrock endpoint override
  --model ID        with --ask-links: the model (default: gpt-4o-mini for openai,
                    amazon.nova-lite-v1:0 for bedrock)
  --json            one JSON line per message instead of the summary
  --skip-invalid    report malformed lines and go on without them (default: stop, print nothing)
  -h, --help        this help`;

const DISENTANGLE_OPTIONS = {
  channel: { type: "string" },
  timezone: { type: "string" },
  "ignore-links": { type: "boolean" },
  "ask-links": { type: "boolean" },
  extractor: { type: "string" },
  "llm-endpoint": { type: "string" },
  model: { type: "string" },
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
    const advisor = model === undefined ? undefined : commandAdvisor(model);
    const linked: LinkedChannel[] = [];
    for (const [i, [name, messages]] of channels.entries()) {
      const status = `linking: channel ${i + 1} of ${channels.length}`;
      let choices: ChannelAdvice["choices"] | undefined;
      if (advisor !== undefined) {
        progress.update(() => `${status}: asking the model`);
        const advice = await adviseChannel(
          name,
          messages.map((m) => linkInput(m, ignoreLinks)),
          advisor,
        );
        choices = advice.choices;
        progress.finish();
        io.stderr.write(`${adviceLine(name, advice)}\n`);
      }
      linked.push(
        disentangleChannel(name, messages, {
          ignoreLinks,
          progress,
          status,
          ...(choices === undefined ? {} : { choices }),
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

/** The model `--ask-links` asks, from the model flags; none without it (and then no model flag). */
function askedModel(options: {
  "ask-links"?: boolean;
  extractor?: string;
  "llm-endpoint"?: string;
  model?: string;
}): LocalModel | undefined {
  if (options["ask-links"] !== true) {
    const given = (["extractor", "llm-endpoint", "model"] as const).find(
      (flag) => options[flag] !== undefined,
    );
    if (given !== undefined) throw new Error(`--${given} needs --ask-links`);
    return undefined;
  }
  return parseModelFlags<never>({ ...options, extractor: options.extractor ?? "openai" }, [
    "openai",
    "bedrock",
  ]);
}

/** What asking did for a channel, on one line of standard error. */
function adviceLine(channel: string, { choices, asked, failures }: ChannelAdvice): string {
  const failed =
    failures.length === 0
      ? ""
      : `; ${formatCount(failures.length)} batch${failures.length === 1 ? "" : "es"} failed (${escapeControls(failures[0] ?? "")}), the linker's own links kept`;
  return `disentangle: ${channel}: asked the model about ${formatCount(asked)} link${asked === 1 ? "" : "s"}, took ${formatCount(choices.size)} answer${choices.size === 1 ? "" : "s"}${failed}`;
}

/**
 * Each channel's JSON lines, one string per channel: `{"id","conversation","parent"}` per
 * message, `parent` left out for a root, and `channel` first when there is more than one.
 */
function* jsonLines(linked: readonly LinkedChannel[]): Generator<string> {
  const several = linked.length > 1;
  for (const { channel, messages, decisions, conversations } of linked) {
    const lines = messages.map((message, i) => {
      const parent = decisions[i]?.parent;
      return JSON.stringify({
        ...(several ? { channel } : {}),
        id: message.id,
        conversation: conversations[i],
        ...(parent === undefined ? {} : { parent }),
      });
    });
    if (lines.length > 0) yield `${lines.join("\n")}\n`;
  }
}
