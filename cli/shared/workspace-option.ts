/**
 * `--workspace DIR`, which every local command takes: the workspace a command works on when it
 * is given, or when no table (flag or environment) names where else to work; opened for the
 * command and closed when it ends (local/workspace.ts).
 */
import { relative, resolve } from "node:path";
import { KnowledgeReader } from "convoseg/knowledge/read";
import { DEFAULT_WORKSPACE, openWorkspace, type Workspace } from "../../local/workspace.js";
import { WorkspaceError } from "../../local/workspace-error.js";
import { CommandFailure } from "./failures.js";
import { escapeControls, plural, shellArg } from "./format.js";
import type { CommandIO } from "./io.js";

export const WORKSPACE_OPTION = { workspace: { type: "string" } } as const;

/** The `--workspace` line of a command's --help. */
export const WORKSPACE_HELP = `  --workspace DIR   the local workspace to work on (default: ${DEFAULT_WORKSPACE} in the current
                    directory, unless a table is named)`;

/**
 * The workspace directory a command works on: `--workspace DIR` when given, else the default
 * unless `named` (a table flag or variable names where the data is: a deployed stack, or an
 * emulator of one's own).
 */
export function workspaceDir(flag: string | undefined, named: boolean): string | undefined {
  if (flag === "") throw new Error("--workspace needs a directory");
  return flag ?? (named ? undefined : DEFAULT_WORKSPACE);
}

/** A path as a command line in the current directory takes it: relative below it, else whole. */
export function shownPath(dir: string): string {
  const shown = relative(process.cwd(), dir);
  return shown === "" || shown.startsWith("..") ? dir : shown;
}

/**
 * The ` --workspace DIR` a suggested command needs to read the workspace at `dir`: none for the
 * default one, which every command reads unless told another.
 */
export function workspaceFlag(dir: string): string {
  return resolve(dir) === resolve(DEFAULT_WORKSPACE)
    ? ""
    : ` --workspace ${shellArg(shownPath(dir))}`;
}

/**
 * Runs `use` on the opened workspace and closes it however `use` ends. A workspace that cannot
 * be opened (busy, missing for a read command) is a one-line failure.
 */
export async function withWorkspace<T>(
  options: { dir: string; create: boolean; fresh?: boolean; starting?: () => void },
  io: CommandIO,
  use: (workspace: Workspace) => Promise<T>,
): Promise<T> {
  let workspace: Workspace;
  try {
    workspace = await openWorkspace({ ...options, note: (line) => io.stderr.write(`${line}\n`) });
  } catch (error) {
    if (error instanceof WorkspaceError) throw new CommandFailure(error.message, { cause: error });
    throw error;
  }
  try {
    return await use(workspace);
  } finally {
    await workspace.close();
  }
}

/**
 * Says (on standard error) how many segments of the workspace were delivered and not extracted,
 * for a command that does not extract: the next run extracts them first.
 */
export async function noteUnextracted(
  command: string,
  workspace: Workspace,
  io: CommandIO,
): Promise<void> {
  const reader = new KnowledgeReader({
    client: workspace.dynamodb(),
    tableName: workspace.tables.resultsTable,
  });
  const left = (await workspace.ledger.unextracted(reader)).length;
  if (left === 0) return;
  io.stderr.write(
    `${command}: ${plural(left, "segment")} of the workspace ${escapeControls(workspace.dir)} ${left === 1 ? "was" : "were"} delivered but not extracted (a command ended first); the next run on it extracts them\n`,
  );
}
