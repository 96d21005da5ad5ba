/**
 * `discord-ask`: registers the `/ask` application command with Discord, so that a guild's members
 * can ask; the stack's interactions endpoint answers it (docs/connectors.md#ask-in-the-channel).
 */
import { AskError, DISCORD_API_BASE, registerDiscordAskCommand } from "convoseg/ask";
import { type Command, command, EXIT } from "./shared/command.js";
import { CommandFailure } from "./shared/failures.js";

const USAGE = `Usage: npm start -- discord-ask --application-id ID [--guild ID] [--command NAME] [--mark] [--api-base URL]

Registers the /ask application command (a question, and an optional "public" switch) with
Discord for the application, in one guild (shown at once) or globally (every guild the
application is in; Discord may take up to an hour to show it); with --mark, the message commands
"Mark as answer", "Reopen question" and "Hide question" too (for askMarkers). Registering again replaces them, and no other command.
The bot token is read from DISCORD_BOT_TOKEN, never from the command line, where other users
of the machine could see it.

Options:
  --application-id ID  the application's id (the developer portal's General Information)
  --guild ID           register in this guild only (default: globally)
  --command NAME       the command's name, as the stack's askCommand (default: ask)
  --mark               register the message commands too ("Mark as answer" and the others)
  --api-base URL       Discord's API (default: ${DISCORD_API_BASE})
  -h, --help           this help`;

export const discordAskCommand: Command = command({
  name: "discord-ask",
  usage: USAGE,
  options: {
    "application-id": { type: "string" },
    guild: { type: "string" },
    command: { type: "string" },
    mark: { type: "boolean" },
    "api-base": { type: "string" },
  },
  parse: ({ values, positionals }) => {
    if (positionals.length > 0)
      throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const applicationId = values["application-id"];
    if (applicationId === undefined) throw new Error("--application-id is required");
    const apiBase = values["api-base"];
    if (apiBase !== undefined && !/^https?:\/\/[^\s]+$/.test(apiBase))
      throw new Error("--api-base must be an http(s) URL");
    return {
      applicationId,
      ...(values.guild !== undefined && { guild: values.guild }),
      ...(values.command !== undefined && { command: values.command }),
      ...(values.mark === true && { mark: true }),
      ...(apiBase !== undefined && { apiBase: apiBase.replace(/\/+$/, "") }),
    };
  },
  run: async (options, io) => {
    const botToken = process.env.DISCORD_BOT_TOKEN?.trim();
    if (!botToken) throw new CommandFailure("set DISCORD_BOT_TOKEN to the application's bot token");
    try {
      const ids = await registerDiscordAskCommand({ ...options, botToken });
      const where = options.guild === undefined ? "globally" : `in guild ${options.guild}`;
      io.stdout.write(`registered /${options.command ?? "ask"} ${where} (command ${ids.ask})\n`);
      if (ids.mark !== undefined) {
        const names = '"Mark as answer", "Reopen question", "Hide question"';
        io.stdout.write(`registered ${names} ${where} (commands ${ids.mark.join(", ")})\n`);
      }
      return EXIT.ok;
    } catch (error) {
      if (error instanceof AskError) throw new CommandFailure(error.message, { cause: error });
      throw error;
    }
  },
});
