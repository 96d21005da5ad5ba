import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { ReportAssets } from "./html.js";

let loading: Promise<ReportAssets> | undefined;

/**
 * The page's script (`page/main.ts` with uPlot from node_modules, bundled and minified) and
 * styles (uPlot's and the page's), made once per process: bundling takes a fraction of a second.
 */
export function loadReportAssets(): Promise<ReportAssets> {
  loading ??= (async () => {
    const entry = fileURLToPath(new URL("./page/main.ts", import.meta.url));
    const bundled = await build({
      entryPoints: [entry],
      bundle: true,
      minify: true,
      format: "iife",
      target: "es2022",
      write: false,
      logLevel: "silent",
    });
    const require = createRequire(import.meta.url);
    const [chartStyle, pageStyle] = await Promise.all([
      readFile(require.resolve("uplot/dist/uPlot.min.css"), "utf8"),
      readFile(new URL("./page/style.css", import.meta.url), "utf8"),
    ]);
    return { script: bundled.outputFiles[0].text, style: `${chartStyle}\n${pageStyle}` };
  })();
  return loading;
}
