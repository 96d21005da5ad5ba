/**
 * A local workspace after `run` on a sample chat, and every item of its tables: what the CLI
 * tests of commands that change a workspace (erase, channel delete) start from and look into.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "convoseg/dynamodb";
import type { ChatMessage } from "convoseg/messages";
import { expect, inject, vi } from "vitest";
import { sampleChat } from "../../local/sample.js";
import { openWorkspace } from "../../local/workspace.js";
import { type CliResult, runCli } from "./cli.js";

const HOUR = 3_600_000;

export interface SampleRun {
  /** The run's workspace directory, and `--workspace` with it for the next commands. */
  dir: string;
  ws: string[];
  chat: ChatMessage[];
}

/**
 * Runs `run` (settle 1h, tick 15m) on a topical sample chat of `channels` into a fresh workspace
 * (its own DynamoDB Local, the tier's SQS emulator), which must succeed.
 */
export async function sampleRun(
  prefix: string,
  sample: { seed: number; channels: string[]; perChannel: number },
  cli: (args: string[]) => Promise<CliResult> = (args) => runCli(args, Date.UTC(2100, 0, 1)),
): Promise<SampleRun> {
  vi.stubEnv("AWS_ENDPOINT_URL_DYNAMODB", undefined);
  vi.stubEnv("AWS_ENDPOINT_URL_SQS", inject("sqsEndpoint"));
  const root = mkdtempSync(join(tmpdir(), `convoseg-${prefix}-`));
  const input = join(root, "chat.jsonl");
  const chat = sampleChat({ ...sample, settle: HOUR, topical: true, start: Date.UTC(2025, 0, 6) });
  writeFileSync(input, chat.map((m) => JSON.stringify(m)).join("\n"));
  const dir = join(root, "ws");
  const ws = ["--workspace", dir];
  const run = await cli(["run", "--input", input, "--settle", "1h", "--tick", "15m", ...ws]);
  expect(run.code, run.stderr).toBe(0);
  return { dir, ws, chat };
}

/** Every item of every table of the workspace at `dir`, by table role. */
export async function scanWorkspace(
  dir: string,
): Promise<Record<string, Record<string, unknown>[]>> {
  const workspace = await openWorkspace({ dir, create: false, note: () => {} });
  try {
    const documents = documentClient(workspace.dynamodb());
    const found: Record<string, Record<string, unknown>[]> = {};
    for (const [role, table] of Object.entries(workspace.tables)) {
      found[role] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await documents.send(
          new ScanCommand({ TableName: table, ExclusiveStartKey: start }),
        );
        found[role].push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
    }
    return found;
  } finally {
    await workspace.close();
  }
}

/** Those of `texts` some file under `dir` holds, as bytes (a database page, a log frame). */
export function textsOnDisk(dir: string, texts: readonly string[]): string[] {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name)));
  return texts.filter((text) => files.some((bytes) => bytes.includes(Buffer.from(text))));
}
