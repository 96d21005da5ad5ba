/**
 * Registering the `/ask` application command with Discord, and with `mark` the message commands
 * "Mark as answer", "Reopen question" and "Hide question": global commands (every guild the application is in, which Discord may take
 * up to an hour to show) or a guild's (at once). A POST of a command of the same name and type
 * replaces it (an upsert, unlike a bulk overwrite, which would delete the application's other
 * commands), so registering again is harmless.
 */
import { AskError } from "./errors.js";
import { DISCORD_API_BASE } from "./run.js";

/** Discord's option types: a string, a boolean. */
const STRING = 3;
const BOOLEAN = 5;
/** Where a command may be used: guilds only (a DM has no community history to search). */
const GUILD = 0;
const SNOWFLAKE = /^\d{15,21}$/;
const COMMAND_NAME = /^[a-z0-9_-]{1,32}$/;

/** The command as Discord takes it: `/ask question:<words> [public:<true|false>]`. */
export function discordAskCommand(name = "ask") {
  return {
    name,
    type: 1,
    description: "Look for an answer in this channel's past conversations",
    contexts: [GUILD],
    options: [
      {
        type: STRING,
        name: "question",
        description: "What to look for",
        required: true,
        max_length: 300,
      },
      {
        type: BOOLEAN,
        name: "public",
        description: "Show the answer to the channel (default: only to you)",
        required: false,
      },
    ],
  };
}

/** The message commands (type 3: a message's "Apps" menu); each name is the interaction's. */
const DISCORD_MARK_COMMANDS = ["Mark as answer", "Reopen question", "Hide question"].map(
  (name) => ({ name, type: 3, contexts: [GUILD] }),
);

interface RegisterOptions {
  applicationId: string;
  /** The bot's token (`Authorization: Bot …`): never logged nor put in an error. */
  botToken: string;
  /** A guild to register in at once; absent: a global command. */
  guild?: string;
  command?: string;
  /** Register the "Mark as answer" message command too. */
  mark?: boolean;
  apiBase?: string;
  fetch?: typeof fetch;
}

/**
 * Registers the command (and with `mark` the message commands); the ids Discord gave them. An
 * {@link AskError} when Discord refuses.
 */
export async function registerDiscordAskCommand(
  options: RegisterOptions,
): Promise<{ ask: string; mark?: string[] }> {
  const name = options.command ?? "ask";
  if (!SNOWFLAKE.test(options.applicationId))
    throw new AskError("ASK_BAD_JOB", "the application id is not a Discord id");
  if (options.guild !== undefined && !SNOWFLAKE.test(options.guild))
    throw new AskError("ASK_BAD_JOB", "the guild id is not a Discord id");
  if (!COMMAND_NAME.test(name))
    throw new AskError("ASK_BAD_JOB", "a command name is 1 to 32 of a-z 0-9 _ -");
  const ask = await register(options, discordAskCommand(name));
  if (!options.mark) return { ask };
  const mark: string[] = [];
  for (const command of DISCORD_MARK_COMMANDS) mark.push(await register(options, command));
  return { ask, mark };
}

async function register(options: RegisterOptions, command: object): Promise<string> {
  const base = options.apiBase ?? DISCORD_API_BASE;
  const path =
    options.guild === undefined
      ? `/applications/${options.applicationId}/commands`
      : `/applications/${options.applicationId}/guilds/${options.guild}/commands`;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(`${base}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bot ${options.botToken}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(command),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new AskError("ASK_POST_FAILED", `discord: ${(error as Error).name}`, { cause: error });
  }
  const body = (await response.json().catch(() => ({}))) as { id?: unknown; message?: unknown };
  if (!response.ok) {
    const said = typeof body.message === "string" ? `: ${body.message.slice(0, 200)}` : "";
    throw new AskError("ASK_POST_FAILED", `discord answered ${response.status}${said}`);
  }
  return typeof body.id === "string" ? body.id : "";
}
