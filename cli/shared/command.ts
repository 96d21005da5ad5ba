/**
 * What every `npm start -- <command>` shares besides its streams and clock (io.ts): its exit
 * codes, and one skeleton that parses the command line, answers `--help`, reports a usage error
 * with the usage text, and only then runs the command, saying any failure it throws in one line
 * (exit 1).
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { EXIT } from "./exit.js";
import { describeFailure } from "./failures.js";
import { escapeControls } from "./format.js";
import type { CommandIO } from "./io.js";
import { nearNames } from "./near-names.js";

export { EXIT } from "./exit.js";

export type CommandOptions = NonNullable<ParseArgsConfig["options"]>;

/** A command line as `parseArgs` reads it with `options`: flags' values and the positionals. */
export type CommandLine<O extends CommandOptions> = ReturnType<
  typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>
>;

export interface CommandSpec<O extends CommandOptions, P> {
  /** The command's name: its first argument, and the prefix of its messages. */
  name: string;
  /** What `--help` prints, and a usage error after its message. */
  usage: string;
  /** Its flags; every command also takes `-h`/`--help`. */
  options: O;
  /** Checks the command line; an error thrown here is a usage error (exit 2). */
  parse(line: CommandLine<O>, io: CommandIO): P;
  /** Does the work; resolves to the exit code. */
  run(parsed: P, io: CommandIO): Promise<number>;
}

/** A command: called with its arguments (after its name), resolves to the exit code. */
export interface Command {
  (args: string[], io: CommandIO): Promise<number>;
  readonly commandName: string;
  readonly usage: string;
  /** Every flag it takes, `help` included. */
  readonly options: CommandOptions;
}

const HELP = { help: { type: "boolean", short: "h" } } as const;

/**
 * What is wrong with a command line, in our words: an unknown option names the nearest one
 * (`parseArgs` says to put it after `--`, advice for another case, with a quote unbalanced).
 */
function usageProblem(error: unknown, options: CommandOptions): string {
  const { code, message } = error as { code?: string; message: string };
  if (code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") return message;
  const given = /^Unknown option '([^']*)'/.exec(message)?.[1] ?? message;
  const flags = Object.entries(options).flatMap(([name, option]) => [
    `--${name}`,
    ...(option.short === undefined ? [] : [`-${option.short}`]),
  ]);
  const [near] = nearNames(given, flags);
  return `unknown option ${given}${near === undefined ? "" : `; did you mean ${near}?`}`;
}

/** The command `spec` describes, run through the skeleton. */
export function command<O extends CommandOptions, P>(spec: CommandSpec<O, P>): Command {
  const options = { ...spec.options, ...HELP };
  const main = async (args: string[], io: CommandIO): Promise<number> => {
    let parsed: P;
    try {
      const line = parseArgs({ args, options, allowPositionals: true, strict: true });
      if ((line.values as { help?: boolean }).help) {
        io.stdout.write(`${spec.usage}\n`);
        return EXIT.ok;
      }
      parsed = spec.parse(line as unknown as CommandLine<O>, io);
    } catch (error) {
      io.stderr.write(`${spec.name}: ${usageProblem(error, options)}\n\n${spec.usage}\n`);
      return EXIT.usage;
    }
    try {
      return await spec.run(parsed, io);
    } catch (error) {
      // Said in one line: a failure is the user's to act on, not a stack trace to read.
      io.stderr.write(`${spec.name}: ${escapeControls(describeFailure(error))}\n`);
      return EXIT.failed;
    }
  };
  return Object.assign(main, {
    commandName: spec.name,
    usage: spec.usage,
    options,
  });
}
