/**
 * The benchmarks' command lines: `parseArgs` plus `--help` (prints the usage, exits 0), and usage
 * errors that print the problem and the usage and exit 2 instead of a stack trace.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

export function benchArgs<T extends Options>(usage: string, options: T) {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${usage.trim()}\n`);
    process.exit(0);
  }
  try {
    return parseArgs({ args, options }).values;
  } catch (error) {
    return usageError(usage, (error as Error).message);
  }
}

/** A usage error found after parsing (a bad value): the message, the usage, exit 2. */
export function usageError(usage: string, message: string): never {
  process.stderr.write(`${message}\n\n${usage.trim()}\n`);
  process.exit(2);
}
