import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openWorkspace } from "../../local/workspace.js";
import { takeLock } from "../../local/workspace-lock.js";

const dir = () => mkdtempSync(join(tmpdir(), "convoseg-lock-"));

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid as number;
}

describe("the workspace lock", () => {
  it("refuses while a live process holds it, naming the holder, the workspace and what to do", async () => {
    const workspace = dir();
    const holder = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
      stdio: "ignore",
    });
    try {
      const lock = { pid: holder.pid, host: hostname(), startedAt: "2026-01-01T00:00:00.000Z" };
      writeFileSync(join(workspace, "lock"), JSON.stringify(lock));
      await expect(takeLock(join(workspace, "lock"), workspace, () => {})).rejects.toMatchObject({
        name: "WorkspaceError",
        code: "WORKSPACE_BUSY",
        message: `the workspace ${workspace} is in use by process ${holder.pid} on ${hostname()} (started 2026-01-01T00:00:00.000Z): wait for that command to end, or pass another --workspace DIR`,
      });
    } finally {
      holder.kill("SIGKILL");
    }
  });

  it.each([
    [
      "whose process is gone",
      async () => JSON.stringify({ pid: await deadPid(), host: hostname(), startedAt: "x" }),
      /from process \d+ \(started x\), which is no longer running/,
    ],
    ["that cannot be read", async () => '{"pid": 12', /took over the unreadable lock of/],
  ])("takes over a lock %s, saying so", async (_, content, note) => {
    const workspace = dir();
    writeFileSync(join(workspace, "lock"), await content());
    const notes: string[] = [];
    const lock = await takeLock(join(workspace, "lock"), workspace, (line) => notes.push(line));
    expect(notes).toEqual([expect.stringMatching(note)]);
    // Now it is this process's: a second taker is refused.
    await expect(takeLock(join(workspace, "lock"), workspace, () => {})).rejects.toMatchObject({
      code: "WORKSPACE_BUSY",
    });
    lock.release();
    (await takeLock(join(workspace, "lock"), workspace, () => {})).release();
  });

  it("keeps a second open of a workspace out until the first is closed", async () => {
    const workspace = dir();
    const first = await openWorkspace({ dir: workspace, create: true, note: () => {} });
    try {
      await expect(
        openWorkspace({ dir: workspace, create: false, note: () => {} }),
      ).rejects.toMatchObject({
        code: "WORKSPACE_BUSY",
      });
    } finally {
      await first.close();
    }
    const second = await openWorkspace({ dir: workspace, create: false, note: () => {} });
    expect(second.tables).toEqual(first.tables);
    await second.close();
  }, 60_000);
});
