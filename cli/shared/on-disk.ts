/**
 * What a workspace keeps on disk follows what a command deleted from its tables: DynamoDB Local's
 * database files are rewritten without the deleted items (a deleted row otherwise lingers in free
 * pages and the write-ahead log), and the report written into the workspace and the search
 * index, which quote messages, are removed.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Workspace } from "../../local/workspace.js";
import { CommandFailure } from "./failures.js";
import { escapeControls } from "./format.js";
import type { CommandIO } from "./io.js";
import { SEARCH_DIR } from "./search-index.js";

/** The last step of `command` on `workspace` after deleting `what` (`their messages`). */
export async function eraseWorkspaceFiles(
  workspace: Workspace,
  io: CommandIO,
  command: string,
  what: string,
): Promise<void> {
  try {
    await workspace.eraseOnDisk();
  } catch (error) {
    throw new CommandFailure(
      `the tables no longer hold ${what}, but their files on disk may still hold copies: ${(error as Error).message}; run the same command again`,
      { cause: error },
    );
  }
  const index = join(workspace.dir, SEARCH_DIR);
  if (existsSync(index)) {
    rmSync(index, { recursive: true, force: true });
    io.stderr.write(
      `${command}: removed the search index, which held ${what}: the next search builds it anew\n`,
    );
  }
  const report = join(workspace.dir, "report.html");
  if (existsSync(report)) {
    rmSync(report);
    io.stderr.write(
      `${command}: removed ${escapeControls(report)}, which quoted ${what}: npm start -- report writes it anew\n`,
    );
  }
  io.stderr.write(`${command}: rewrote the workspace's database files without ${what}\n`);
}
