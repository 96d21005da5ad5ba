/**
 * Channel deletion. Removing everything convoseg keeps of a channel, state, messages and
 * knowledge, against a deployment's tables or a local workspace's (`npm start -- channel delete`).
 */
export { type ChannelPart, deleteChannel, type PartCount } from "./delete-channel.js";
