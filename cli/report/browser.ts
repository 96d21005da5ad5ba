/**
 * Opening a file in the user's browser, when one can be found: `$BROWSER` if set, else the
 * platform's opener (`open` on macOS, `start` on Windows, `xdg-open` where there is a display).
 * Finding none is an answer, not a failure: the caller says where the file is instead.
 */
import { spawn } from "node:child_process";

/** How long an opener may run before it counts as having opened the file (some never exit). */
const SETTLE_MS = 3000;

export type Opened = { opened: true; by: string } | { opened: false; why: string };

/** Opens `path` (absolute) with the first opener `env` and `platform` offer. */
export async function openInBrowser(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<Opened> {
  const opener = openerFor(path, env, platform);
  if ("why" in opener) return { opened: false, why: opener.why };
  const [command, ...args] = opener.argv;
  return new Promise<Opened>((resolve) => {
    let settled = false;
    const done = (outcome: Opened) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.unref();
      resolve(outcome);
    };
    const child = spawn(command, args, { stdio: "ignore", detached: true, env });
    child.once("error", (error: NodeJS.ErrnoException) =>
      done({
        opened: false,
        why:
          error.code === "ENOENT"
            ? `${command} was not found`
            : `${command} failed: ${error.message}`,
      }),
    );
    child.once("exit", (code, signal) =>
      done(
        code === 0
          ? { opened: true, by: command }
          : {
              opened: false,
              why: `${command} exited with ${code === null ? `signal ${signal}` : `status ${code}`}`,
            },
      ),
    );
    // Still running: a browser that stays in the foreground has the file.
    const timer = setTimeout(() => done({ opened: true, by: command }), SETTLE_MS);
  });
}

function openerFor(
  path: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
): { argv: string[] } | { why: string } {
  // $BROWSER is a list of commands (`firefox:w3m`), each with %s for the file or taking it last.
  const browser = env.BROWSER?.split(":").find((command) => command.trim() !== "");
  if (browser !== undefined) {
    const words = browser.trim().split(/\s+/);
    return {
      argv: words.some((w) => w.includes("%s"))
        ? words.map((w) => w.replaceAll("%s", path))
        : [...words, path],
    };
  }
  if (platform === "darwin") return { argv: ["open", path] };
  // `start` takes its first quoted argument as a window title: an empty one comes first.
  if (platform === "win32") return { argv: ["cmd", "/c", "start", "", path] };
  // Without a display xdg-open falls back to a text browser in this terminal, if any.
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) {
    return { why: "no display (DISPLAY and WAYLAND_DISPLAY are not set) and no BROWSER" };
  }
  return { argv: ["xdg-open", path] };
}
