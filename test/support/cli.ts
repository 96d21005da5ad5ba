import { Readable } from "node:stream";
import { main } from "../../cli/commands.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `npm start -- <args>` in process, capturing its output, with the clock at `now`; with
 * `tty`, standard output says it is a terminal.
 */
export async function runCli(
  args: string[],
  now: number,
  stdinText: string | Uint8Array = "",
  options: { tty?: boolean } = {},
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    stdin: Readable.from([stdinText]),
    stdout: { write: (text: string) => (stdout += text), isTTY: options.tty },
    stderr: { write: (text: string) => (stderr += text) },
    now: () => now,
  });
  return { code, stdout, stderr };
}
