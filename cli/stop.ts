/**
 * `stop`: stops the workspace's warm DynamoDB Local, which otherwise runs until the workspace has
 * gone unused for CONVOSEG_WARM_MINUTES (local/warm-dynamodb.ts).
 */
import { stopWorkspace } from "../local/workspace.js";
import { WorkspaceError } from "../local/workspace-error.js";
import { type Command, command, EXIT } from "./shared/command.js";
import { CommandFailure } from "./shared/failures.js";
import { escapeControls } from "./shared/format.js";
import { WORKSPACE_HELP, WORKSPACE_OPTION, workspaceDir } from "./shared/workspace-option.js";

const STOP_USAGE = `Usage: npm start -- stop [--workspace DIR]

Stops the DynamoDB Local the local workspace keeps running between commands (it stops by itself
once the workspace has gone unused for CONVOSEG_WARM_MINUTES, 10 by default). Says "stopped", or
"nothing was running". The workspace's data stays; the next command starts it again.

Options:
${WORKSPACE_HELP}
  -h, --help        this help`;

export const stopCommand: Command = command({
  name: "stop",
  usage: STOP_USAGE,
  options: WORKSPACE_OPTION,
  parse: ({ values, positionals }) => {
    if (positionals.length > 0) {
      throw new Error(`unexpected argument ${JSON.stringify(positionals[0])}`);
    }
    return { dir: workspaceDir(values.workspace, false) as string };
  },
  run: async ({ dir }, io) => {
    let stopped: boolean;
    try {
      stopped = await stopWorkspace({ dir, note: (line) => io.stderr.write(`${line}\n`) });
    } catch (error) {
      if (error instanceof WorkspaceError)
        throw new CommandFailure(error.message, { cause: error });
      throw error;
    }
    io.stdout.write(
      stopped
        ? `stopped the DynamoDB Local of ${escapeControls(dir)}\n`
        : `nothing was running for ${escapeControls(dir)}\n`,
    );
    return EXIT.ok;
  },
});
