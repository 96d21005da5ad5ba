/**
 * The manual's commands and flags against the commands themselves: every `npm start` command
 * has its section in docs/commands.md and a row in the README, each section's synopsis and flag
 * table list exactly the flags its `--help` prints, and every flag the manual shows after
 * `npm start -- <command>` is one that command takes.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { docPages } from "../support/docs.js";

const FLAG = /(?<![\w-])--[a-z][a-z-]*/g;
const flagsOf = (text: string) => new Set([...text.matchAll(FLAG)].map((m) => m[0]));
const minus = (a: Set<string>, b: Set<string>) => [...a].filter((x) => !b.has(x)).sort();

/** The flags a `--help` offers: in its usage lines and at the head of its option lines. */
function offered(usage: string): Set<string> {
  const synopsis = usage.slice(0, usage.indexOf("\n\n"));
  const options = [...usage.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]);
  const flags = new Set([...flagsOf(synopsis), ...options]);
  flags.delete("--help");
  return flags;
}

const page = (path: string) => docPages().find((p) => p.path === path)?.text ?? "";

async function help(args: string[]): Promise<string> {
  const { code, stdout } = await runCli([...args, "--help"], 0);
  expect(code, `${args.join(" ")} --help`).toBe(0);
  return stdout;
}

/** The commands `npm start -- --help` lists: the first word of each line under "Commands:". */
async function commands(): Promise<string[]> {
  const usage = await help([]);
  const list = usage.slice(
    usage.indexOf("Commands:"),
    usage.indexOf("\n\n", usage.indexOf("Commands:")),
  );
  return [...list.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]);
}

/** docs/commands.md's sections, keyed by the command each documents (its heading's first word). */
function sections(): Map<string, string> {
  const text = page("docs/commands.md");
  const out = new Map<string, string>();
  for (const part of text.split(/^## /m).slice(1)) {
    const heading = part.slice(0, part.indexOf("\n"));
    out.set(heading.split(" ")[0], part);
  }
  return out;
}

/**
 * What a section documents as its command's flags: the synopsis lines of that command in its
 * first code block (a line `npm start -- <command> ...` and the indented lines continuing it),
 * and the first column of its flag table.
 */
function documentedFlags(command: string, section: string): Set<string> {
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  let mine = false;
  const synopsis = block.split("\n").filter((line) => {
    if (line.startsWith("npm start -- ")) mine = line.startsWith(`npm start -- ${command} `);
    else if (!/^\s/.test(line)) mine = false;
    return mine;
  });
  const lines = synopsis.map((line) => line.split(/\s#\s/)[0]);
  const rows = [...section.matchAll(/^\| `(--[^`]*)`/gm)].map((m) => m[1]);
  return flagsOf([...lines, ...rows].join(" "));
}

describe("the manual's commands", () => {
  it("documents every command in docs/commands.md and the README", async () => {
    const listed = await commands();
    expect(listed).toEqual(
      expect.arrayContaining([
        "segment",
        "run",
        "report",
        "import",
        "import-chat",
        "topics",
        "channel",
      ]),
    );
    const readme = page("README.md");
    for (const command of listed) {
      expect(sections().has(command), `docs/commands.md: ## ${command}`).toBe(true);
      expect(readme, `README.md: the command ${command}`).toMatch(
        new RegExp(`^\\| \`${command}[ \`]`, "m"),
      );
    }
  });

  it.each([
    "segment",
    "disentangle",
    "run",
    "report",
    "import",
    "import-chat",
    "topics",
    "digest",
    "channel",
    "reextract",
    "erase",
    "serve",
    "faq",
  ])("%s: the synopsis and flag table list exactly the flags of --help", async (command) => {
    const section = sections().get(command) ?? "";
    const documented = documentedFlags(command, section);
    const actual = offered(await help([command]));
    expect({
      undocumented: minus(actual, documented),
      unknown: minus(documented, actual),
    }).toEqual({ undocumented: [], unknown: [] });
  });

  it("shows only flags a command takes after `npm start -- <command>`", async () => {
    const known = new Map<string, Set<string>>();
    for (const command of await commands()) known.set(command, offered(await help([command])));
    const wrong: string[] = [];
    for (const { path: file, text: source } of docPages()) {
      // Code blocks included: the synopses and examples are where most flags are shown.
      const text = source.replace(/\\\n/g, " ");
      const calls = [...text.matchAll(/npm start -- ([a-z][a-z-]*)([^`\n]*)/g)];
      for (const [, command, rest] of calls) {
        const flags = known.get(command);
        if (flags === undefined) {
          if (command !== "help") wrong.push(`${file}: npm start -- ${command}: no such command`);
          continue;
        }
        const shown = flagsOf(rest.split(/\s#\s/)[0]);
        shown.delete("--help");
        for (const flag of minus(shown, flags)) wrong.push(`${file}: ${command} ${flag}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
