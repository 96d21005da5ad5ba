/**
 * The data lifecycle: removing what convoseg keeps of a channel, against a deployment's tables
 * or a local workspace's (`npm start -- channel delete`).
 */
export {
  type ChannelPart,
  type DeleteChannelOptions,
  deleteChannel,
  type PartCount,
  type Tally,
} from "./delete-channel.js";
