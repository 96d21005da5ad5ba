/**
 * Edits, deletions and authors. The `Editor` that applies a change to a stored message (convoseg's
 * addition to the history contract), its outcomes and errors, and the author index an erasure
 * pages through to find a person's messages.
 */
export {
  type AuthoredMessage,
  type AuthorIndex,
  type AuthorQuery,
  type AuthorRef,
  authorMatches,
} from "./authors.js";
export { ChangeError, type ChangeStatus, type Editor, type MessageChange } from "./changes.js";
