/**
 * What builds and renders the scheduled digest: h-digest's `buildDigest` over its DynamoDB
 * `DigestSources`, and its renderers. Until those are merged the build fails with a coded
 * error, and the JSON is the digest as it is.
 */
import type { DigestWiring } from "./lambda.js";

export class DigestUnwiredError extends Error {
  override readonly name: string = "DigestUnwiredError";
  readonly code = "DIGEST_UNWIRED";
}

export const wiring: DigestWiring = {
  build: () => async () => {
    throw new DigestUnwiredError("digest: no digest builder is wired into functions/digest");
  },
  render: {
    json: (d) => `${JSON.stringify(d, null, 2)}\n`,
    markdown: () => {
      throw new DigestUnwiredError("digest: no Markdown renderer is wired into functions/digest");
    },
    html: () => {
      throw new DigestUnwiredError("digest: no HTML renderer is wired into functions/digest");
    },
  },
};
