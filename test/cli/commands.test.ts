/**
 * Each command's `--help` against what its parser takes: every flag it accepts is in its help,
 * each with a value placeholder exactly when it takes a value, and the help names no other; the
 * command list names every command. With the manual's test (its synopses against `--help`), the
 * docs, the help and the code say the same.
 */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../cli/commands.js";
import { runCli } from "../support/cli.js";

/** The option lines of a help text: `  --flag VALUE   what it does` (or `  -h, --help ...`). */
function helpOptions(usage: string): Map<string, { value: boolean }> {
  const options = new Map<string, { value: boolean }>();
  for (const [, flag, value] of usage.matchAll(
    /^ {2}(?:-\w, )?--([a-z][a-z-]*)( [A-Z][A-Z]*\b)?/gm,
  )) {
    options.set(flag, { value: value !== undefined });
  }
  return options;
}

describe("the commands' help", () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    "%s --help lists exactly the flags it takes, a value for each that takes one",
    async (name, entry) => {
      const command = await entry.load();
      // The list's name is the command's own: what its messages begin with.
      expect(command.commandName).toBe(name);
      const { code, stdout } = await runCli([name, "--help"], 0);
      expect(code).toBe(0);
      expect(stdout).toBe(`${command.usage}\n`);
      const listed = helpOptions(stdout);
      const taken = new Map(
        Object.entries(command.options).map(([flag, option]) => [
          flag,
          { value: option.type === "string" },
        ]),
      );
      expect(Object.fromEntries(listed)).toEqual(Object.fromEntries(taken));
    },
  );

  it("lists every command once, each under its own name", async () => {
    const { code, stdout } = await runCli(["--help"], 0);
    expect(code).toBe(0);
    const commands = stdout.slice(stdout.indexOf("Commands:\n") + 10, stdout.indexOf("\n\nRun "));
    const names = commands.split("\n").map((line) => /^ {2}([a-z][a-z-]*) /.exec(line)?.[1]);
    expect(names).toEqual(COMMANDS.map((c) => c.name));
  });
});

describe("a mistyped command line", () => {
  it("names the unknown option and the nearest one, without parseArgs' advice", async () => {
    const { code, stderr } = await runCli(["topics", "help", "--limt", "3"], 0);
    expect(code).toBe(2);
    expect(stderr.split("\n")[0]).toBe("topics: unknown option --limt; did you mean --limit?");
    expect(stderr).not.toContain("positional argument");
  });

  it("names only the unknown option when none is near", async () => {
    const { code, stderr } = await runCli(["topics", "help", "--zzzzzz"], 0);
    expect(code).toBe(2);
    expect(stderr.split("\n")[0]).toBe("topics: unknown option --zzzzzz");
  });

  it("suggests the nearest command", async () => {
    const { code, stderr } = await runCli(["topcis"], 0);
    expect(code).toBe(2);
    expect(stderr.split("\n")[0]).toBe('unknown command "topcis"; did you mean topics?');
  });

  it("says its version", async () => {
    const { code, stdout } = await runCli(["--version"], 0);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^convoseg \d+\.\d+\.\d+\n$/);
  });
});
