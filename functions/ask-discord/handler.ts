/**
 * The Discord interactions endpoint behind a Lambda Function URL: every request verified with the
 * application's Ed25519 public key (DISCORD_PUBLIC_KEY: public, so a setting, not a secret),
 * PING answered with PONG, `/ask` deferred and handed to the answer function, which edits the
 * deferred response through the interaction's webhook.
 */
import { discordAskReceiver, discordPublicKey } from "convoseg/connectors";
import { askFunction } from "../ask-receiver.js";
import { requiredEnvironment } from "../webhook-receiver.js";

// Read at cold start: a wrong key fails every request with 500 and its reason in the log.
const key = (() => {
  try {
    return { key: discordPublicKey(requiredEnvironment("discord ask", "DISCORD_PUBLIC_KEY")) };
  } catch (error) {
    return { error: error as Error };
  }
})();
const { parts, handler: functionUrlHandler } = askFunction("discord");

/** @public The Lambda runtime calls it: infra names this file as the function's entry. */
export const handler = functionUrlHandler(
  discordAskReceiver({
    ...parts,
    publicKey: async () => {
      if (key.key === undefined) throw key.error;
      return key.key;
    },
    command: process.env.ASK_COMMAND || "ask",
  }),
);
