/**
 * `erase` on a local workspace (DynamoDB Local): after a run, erasing one person leaves no table
 * of the workspace holding their name or any text of theirs, no result or topic entry citing
 * their messages, everyone else's messages as they were, and an audit item; a dry run before
 * changes nothing, and a repeat erases nothing more. Nor do the workspace's files on disk hold
 * their texts: DynamoDB Local's database, its write-ahead log, the report.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { runCli } from "../support/cli.js";
import { sampleRun, scanWorkspace, textsOnDisk } from "../support/workspace-run.js";

const NOW = Date.UTC(2100, 0, 1);
const cli = (args: string[]) => runCli(args, NOW);

const json = (value: unknown) =>
  JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v));

/** Every message id a results-table item cites (results, candidates, topic entries). */
function citedIds(items: Record<string, unknown>[]): Set<string> {
  const ids = new Set<string>();
  const walk = (value: unknown, key?: string) => {
    if (Array.isArray(value)) {
      for (const v of value) {
        if (typeof v === "string" && key === "messageIds") ids.add(v);
        else walk(v);
      }
    } else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        if ((k === "first" || k === "last") && v && typeof v === "object" && "id" in v) {
          ids.add(String((v as { id: unknown }).id));
        }
        walk(v, k);
      }
    }
  };
  walk(items);
  return ids;
}

describe("erase", () => {
  it("erases a person from every table of the workspace, and nothing of anyone else", async () => {
    const { dir, ws, chat } = await sampleRun(
      "erase",
      { seed: 7, channels: ["desk", "ops", "dev"], perChannel: 40 },
      cli,
    );

    const counts = new Map<string, number>();
    for (const m of chat) counts.set(String(m.user), (counts.get(String(m.user)) ?? 0) + 1);
    const [user] = [...counts].sort((a, b) => b[1] - a[1])[0];
    const theirs = chat.filter((m) => m.user === user);
    const othersTexts = new Set(chat.filter((m) => m.user !== user).map((m) => String(m.text)));
    const ownTexts = theirs.map((m) => String(m.text)).filter((t) => !othersTexts.has(t));
    const name = new RegExp(`"${user}"`);
    const before = await scanWorkspace(dir);
    expect(json(before)).toMatch(name);
    // A report written into the workspace quotes them too, and the search index holds them.
    writeFileSync(join(dir, "report.html"), ownTexts.join("\n"));
    const ownText = ownTexts[0] as string;
    const found = await cli(["search", ownText, "--kind", "message", "--json", ...ws]);
    expect(found.code, found.stderr).toBe(0);
    const authors = (out: string) =>
      out
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => (JSON.parse(l) as { author: string }).author);
    expect(authors(found.stdout)).toContain(user);
    expect(existsSync(join(dir, "search"))).toBe(true);
    expect(textsOnDisk(dir, ownTexts).length).toBeGreaterThan(0);

    const dry = await cli(["erase", "--user", user, "--dry-run", ...ws]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`"${user}" wrote ${theirs.length} messages in`);
    // A display name alone: the channels it would touch are named, and nothing is erased.
    const unscoped = await cli(["erase", "--user", user, ...ws]);
    expect(unscoped.code).toBe(2);
    const where = [...new Set(theirs.map((m) => String(m.channel)))];
    expect(unscoped.stderr).toContain(
      `--user "${user}" alone matches that display name in every channel, whoever wrote there: it would erase ${theirs.length} messages in ${where.length} channel`,
    );
    for (const channel of where)
      expect(unscoped.stderr).toMatch(new RegExp(`^  ${channel}: \\d+ messages?$`, "m"));
    expect(unscoped.stderr).toContain("give --channel ID for each channel");
    expect(await scanWorkspace(dir)).toEqual(before);
    const erased = await cli([
      "erase",
      "--user",
      user,
      "--all-channels",
      "--requested-by",
      "dpo@example",
      ...ws,
    ]);
    expect(erased.code, erased.stderr).toBe(0);
    expect(erased.stdout).toContain(`"${user}" erased: ${theirs.length} messages deleted`);
    // One count per count the registry's kinds keep in the audit, each labelled.
    expect(erased.stdout).toMatch(
      /candidates removed: \d+; .*topic entries deleted: \d+; questions removed: \d+; .*segments withdrawn from the term statistics: [1-9]/,
    );
    expect(erased.stdout).toMatch(
      /audit: erasure#[0-9a-f]{32}#.*asked for by dpo@example, finished/,
    );

    // Nothing of theirs in any file: the database was rewritten, the report removed.
    expect(textsOnDisk(dir, ownTexts)).toEqual([]);
    expect(erased.stderr).toContain("rewrote the workspace's database files");
    expect(erased.stderr).toMatch(/removed .*report\.html, which quoted their messages/);
    expect(erased.stderr).toContain("removed the search index, which held their messages");
    expect(existsSync(join(dir, "search"))).toBe(false);
    // Searched again, the index is built from what the tables hold now: nothing of theirs.
    const refound = await cli(["search", ownText, "--kind", "message", "--json", ...ws]);
    expect(refound.code, refound.stderr).toBe(0);
    expect(authors(refound.stdout)).not.toContain(user);

    const after = await scanWorkspace(dir);
    const everything = json(after);
    expect(everything).not.toMatch(name);
    // Their texts, wherever kept: as items' strings, and inside the ledger's JSON bodies.
    for (const text of ownTexts) {
      expect(everything, text).not.toContain(JSON.stringify(text).slice(1, -1));
    }
    expect(ownTexts.length).toBeGreaterThan(0);
    const gone = new Set(theirs.map((m) => String(m.id)));
    for (const id of citedIds(after.resultsTable)) expect(gone.has(id), id).toBe(false);
    // The others' messages are exactly as they were.
    const others = (items: Record<string, unknown>[]) =>
      items.filter((i) => i.author !== undefined && i.author !== user);
    expect(others(after.messagesTable)).toEqual(others(before.messagesTable));
    const audits = after.resultsTable.filter((i) => String(i.item).startsWith("erasure#"));
    expect(audits).toEqual([
      expect.objectContaining({
        requestedBy: "dpo@example",
        state: "finished",
        counts: expect.objectContaining({ messages: theirs.length }),
      }),
    ]);

    const again = await cli(["erase", "--user", user, "--all-channels", "--json", ...ws]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ done: true, counts: { messages: 0 } });
    // By a user id no message of this chat carries (its lines have none): nothing, said so.
    const byId = await cli(["erase", "--user-id", "U0NOBODY", ...ws]);
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toContain('user id "U0NOBODY" had no messages left to erase');
    const named = await cli(["erase", "--user", user, "--channel", where[0] as string, ...ws]);
    expect(named.stderr).toContain("found by --user-id");
  }, 240_000);

  it("refuses without a user, and a deployment without its tables", async () => {
    expect((await cli(["erase"])).stderr).toContain("--user-id ID or --user NAME is required");
    expect((await cli(["erase", "--user-id", ""])).stderr).toContain("--user-id ID: give");
    const both = await cli(["erase", "--user", "u", "--channel", "c", "--all-channels"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--channel and --all-channels say two scopes");
    vi.stubEnv("MESSAGES_TABLE", undefined);
    vi.stubEnv("RESULTS_TABLE", undefined);
    const half = await cli(["erase", "--user", "u", "--messages-table", "m"]);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain("--messages-table and --results-table");
  });
});
