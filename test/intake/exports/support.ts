import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ExportInput,
  type ExportMessage,
  type ExportOptions,
  type ExportReport,
  readExports,
} from "convoseg/exports";

const FIXTURES = join(import.meta.dirname, "fixtures");
export const fixture = (...parts: string[]): string => join(FIXTURES, ...parts);
export const tempDir = (): string => mkdtempSync(join(tmpdir(), "convoseg-exports-"));

/** Every message of the inputs, and the report once they are read. */
export async function readAll(
  inputs: readonly ExportInput[],
  options: ExportOptions = { timezone: "UTC" },
): Promise<{ messages: ExportMessage[]; report: ExportReport }> {
  const reading = readExports(inputs, options);
  const messages: ExportMessage[] = [];
  for await (const message of reading) messages.push(message);
  return { messages, report: reading.report };
}

/** The message of `id` (fails the test when there is none). */
export function byId(messages: readonly ExportMessage[], id: string): ExportMessage {
  const found = messages.find((m) => m.id === id);
  if (!found) throw new Error(`no message ${id}`);
  return found;
}
