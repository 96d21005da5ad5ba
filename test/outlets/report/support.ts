import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import type { CommandIO } from "../../../cli/shared/io.js";

/** Debian's Chromium, which .ci/run installs: playwright-core brings no browser of its own. */
const CHROMIUM = "/usr/bin/chromium";

/** Where the browser tests leave their screenshots (git ignores it). */
export const ARTIFACTS = join(import.meta.dirname, "../../../test-artifacts");

export const tempDir = (): string => mkdtempSync(join(tmpdir(), "convoseg-report-"));

export function writeJsonLines(path: string, values: readonly unknown[]): string {
  writeFileSync(
    path,
    values.map((v) => `${typeof v === "string" ? v : JSON.stringify(v)}\n`).join(""),
  );
  return path;
}

/** Runs a command function in process with the clock at `now`, capturing what it writes. */
export async function runCommand(
  command: (args: string[], io: CommandIO) => Promise<number>,
  args: string[],
  now: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await command(args, {
    stdin: Readable.from([""]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    now: () => now,
  });
  return { code, stdout, stderr };
}

/**
 * Headless Chromium with a fresh profile, started as this machine needs it: as root (no sandbox),
 * with no GPU, and without the background connections a closed network refuses.
 */
export function launchChromium(): Promise<BrowserContext> {
  return chromium.launchPersistentContext(tempDir(), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A report opened from disk, once drawn, with every console error and uncaught exception. */
export async function openReport(
  context: BrowserContext,
  path: string,
): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`file://${path}`);
  await page.waitForSelector("html[data-ready]");
  return { page, errors };
}
