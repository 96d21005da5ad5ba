/**
 * What builds and renders the scheduled digest: lib/outlets/digest's `buildDigest` over the stack's
 * results and messages tables (the period's results by a Query, their messages by id: never a
 * scan), and its Markdown, JSON and HTML renderers.
 */
import {
  buildDigest,
  digestHtml,
  digestJson,
  digestMarkdown,
  dynamoDbDigestSources,
} from "convoseg/digest";
import type { DigestWiring } from "./lambda.js";

export const wiring: DigestWiring = {
  build: (client, { resultsTable, messagesTable }) => {
    const sources = dynamoDbDigestSources({ client, resultsTable, messagesTable });
    return ({ channels, since, until, now }) =>
      buildDigest(sources, { channels, since, until, now: new Date(now) });
  },
  render: { markdown: digestMarkdown, json: digestJson, html: digestHtml },
};
