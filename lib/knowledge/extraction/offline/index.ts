/**
 * The offline extractor. A segment's topics from its structured turns without a model, weighed
 * against the channel's term statistics.
 */
export {
  KEYPHRASE_EXTRACTOR_NAME,
  KEYPHRASE_EXTRACTOR_VERSION,
  KEYPHRASE_VOCABULARY,
  KeyphraseExtractor,
} from "./extractor.js";
export { namesTerm } from "./names.js";
