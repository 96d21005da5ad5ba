/** `channels` on a workspace of its own: what an imported Slack export left there, by channel. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../support/cli.js";
import { SLACK_FOLDER } from "./export-fixtures.js";

const cli = (args: string[]) => runCli(args, Date.UTC(2100, 0, 1));

describe("channels", () => {
  it("lists each channel's name, id, platform, messages and times, most messages first", async () => {
    // The workspace's own DynamoDB Local, as a user's command starts it.
    vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", undefined);
    const workspace = join(mkdtempSync(join(tmpdir(), "convoseg-channels-")), "ws");
    const imported = await cli(["import-chat", SLACK_FOLDER, "--workspace", workspace, "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    const stored = (
      JSON.parse(imported.stdout) as { channels: { channel: string; messages: number }[] }
    ).channels;

    const json = await cli(["channels", "--workspace", workspace, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const listed = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(listed.map((c) => c.channel).sort()).toEqual(stored.map((c) => c.channel).sort());
    expect(listed[0]).toMatchObject({
      channel: "C0GENERAL",
      name: "general",
      platform: "slack",
      messages: 11,
    });
    // Most messages first; each first time no later than its last.
    for (let i = 1; i < listed.length; i++) {
      expect(listed[i].messages).toBeLessThanOrEqual(listed[i - 1].messages);
    }
    for (const c of listed) expect(c.first).toBeLessThanOrEqual(c.last);

    const text = await cli(["channels", "--workspace", workspace]);
    expect(text.stdout.split("\n")[0]).toMatch(/^name +id +platform +messages +first +last$/);
    expect(text.stdout).toMatch(
      /^general +C0GENERAL +slack +11 +2024-01-10T09:46Z +2024-01-11T10:05Z$/m,
    );
  }, 120_000);

  it("says there is no workspace to list", async () => {
    const missing = join(mkdtempSync(join(tmpdir(), "convoseg-channels-")), "none");
    const { code, stderr } = await cli(["channels", "--workspace", missing]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^channels: no workspace in /);
  });
});
