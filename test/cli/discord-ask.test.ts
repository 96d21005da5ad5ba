import { discordAskCommand } from "convoseg/ask";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { recordingServer } from "../support/ask-world.js";
import { runCli } from "../support/cli.js";

let discord: Awaited<ReturnType<typeof recordingServer>>;
beforeAll(async () => {
  discord = await recordingServer();
});
afterAll(() => discord?.close());

describe("discord-ask", () => {
  it("registers /ask in a guild with the bot token from the environment, never the command line", async () => {
    vi.stubEnv("DISCORD_BOT_TOKEN", "bot-token-1");
    const app = "1300000000000000001";
    const guild = "1100000000000000002";
    const { code, stdout } = await runCli(
      [
        "discord-ask",
        "--application-id",
        app,
        "--guild",
        guild,
        "--api-base",
        `${discord.url}/api/`,
      ],
      0,
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/^registered \/ask in guild 1100000000000000002/);
    expect(discord.requests).toEqual([
      {
        method: "POST",
        path: `/api/applications/${app}/guilds/${guild}/commands`,
        body: JSON.stringify(discordAskCommand()),
      },
    ]);
    vi.unstubAllEnvs();
  });

  it("with --mark, registers the message commands too, each by its own upsert", async () => {
    vi.stubEnv("DISCORD_BOT_TOKEN", "bot-token-1");
    const app = "1300000000000000001";
    const from = discord.requests.length;
    const args = ["discord-ask", "--application-id", app, "--mark", "--api-base", discord.url];
    for (let run = 0; run < 2; run++) {
      const { code, stdout } = await runCli(args, 0);
      expect(code).toBe(0);
      expect(stdout).toMatch(
        /^registered \/ask globally .*\nregistered "Mark as answer", "Reopen question", "Hide question" globally/,
      );
    }
    // Registering again posts the same two commands: Discord replaces each by its name and type.
    const posted = discord.requests.slice(from);
    expect(posted.map((r) => [r.method, r.path])).toEqual(
      Array(8).fill(["POST", `/applications/${app}/commands`]),
    );
    expect(posted.slice(0, 4).map((r) => JSON.parse(r.body))).toEqual([
      discordAskCommand(),
      { name: "Mark as answer", type: 3, contexts: [0] },
      { name: "Reopen question", type: 3, contexts: [0] },
      { name: "Hide question", type: 3, contexts: [0] },
    ]);
    expect(posted.slice(4).map((r) => r.body)).toEqual(posted.slice(0, 4).map((r) => r.body));
    vi.unstubAllEnvs();
  });

  it("refuses to run without the token or an application id, and says what Discord refused", async () => {
    vi.stubEnv("DISCORD_BOT_TOKEN", "");
    const noToken = await runCli(["discord-ask", "--application-id", "1300000000000000001"], 0);
    expect(noToken).toMatchObject({ code: 1, stderr: expect.stringMatching(/DISCORD_BOT_TOKEN/) });
    expect((await runCli(["discord-ask"], 0)).code).toBe(2);
    vi.stubEnv("DISCORD_BOT_TOKEN", "t");
    const badId = await runCli(["discord-ask", "--application-id", "../x"], 0);
    expect(badId).toMatchObject({ code: 1, stderr: expect.stringMatching(/not a Discord id/) });
    vi.unstubAllEnvs();
  });
});
