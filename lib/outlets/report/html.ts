import { createHash } from "node:crypto";
import type { Report } from "./data.js";

/** What the page is made of besides its data: see {@link loadReportAssets}. */
export interface ReportAssets {
  /** The page's script, the chart library bundled in. */
  script: string;
  style: string;
}

/**
 * The report as one self-contained HTML file: styles, script and data inline, nothing fetched.
 * The data is JSON in `<script type="application/json">` blocks with `<`, `>` and `&` written as
 * `\u003c` etc., so that no text from chat can end a block or open a tag; the page puts it into
 * the DOM as text only. The Content-Security-Policy lets only this page's own script run: were
 * markup to get in anyway, no script of its own would. The message texts come last, after the
 * script, so that the page is drawn while the browser still reads them.
 */
export function renderReportHtml({ data, texts }: Report, assets: ReportAssets): string {
  for (const [name, text] of [
    ["script", assets.script],
    ["style", assets.style],
  ]) {
    // Either would end (or derail the parsing of) the element it is inlined in.
    if (/<\/(script|style)|<!--/i.test(text)) {
      throw new Error(`the report's ${name} contains a closing tag or comment opener`);
    }
  }
  const scriptHash = createHash("sha256").update(assets.script).digest("base64");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-${scriptHash}'; style-src 'unsafe-inline'">
<title>convoseg report</title>
<style>${assets.style}</style>
</head>
<body>
<header><h1>convoseg report</h1><div id="meta"></div><div id="search" role="search"></div></header>
<section id="topics" aria-label="topics"></section>
<section id="health" aria-label="the community's health"></section>
<section id="digest" aria-label="the last seven days"></section>
<section id="faq" aria-label="recurring questions"></section>
<section id="questions" aria-label="questions"></section>
<h2>In numbers</h2>
<section id="summary" aria-label="summary"></section>
<h2>Channels</h2>
<section id="channels" aria-label="channels"></section>
<main id="channel"></main>
<noscript>This report is drawn by its script: open it in a browser with JavaScript on.</noscript>
<script type="application/json" id="report-data">${embedJson(data)}</script>
<script>${assets.script}</script>
<script type="application/json" id="report-texts">${embedJson(texts)}</script>
</body>
</html>
`;
}

/** JSON that can stand inside a `<script>` element: no `<`, `>` or `&` as themselves. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
