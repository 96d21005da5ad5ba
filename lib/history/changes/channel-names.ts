import type { ConversationId } from "../conversation-id.js";

/**
 * A channel's display name taken off its messages: what an erasure does where the name is the
 * person's (a Telegram private chat is named after the one it is with).
 */
export interface ChannelNames {
  /**
   * Removes `channelName` from every message of the conversation that carries `name` (deleted
   * ones too), but those in `except`; resolves to how many it changed. Idempotent.
   */
  clearChannelName(
    conversationId: ConversationId,
    name: string,
    except?: readonly string[],
  ): Promise<number>;
}
