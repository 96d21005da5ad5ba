/**
 * A search hit's snippet: its words around the first match, the matched words marked. Pure, with
 * no Node and no DOM, so that the report page's search box bundles it (the search barrel brings
 * the stores' types and their Node imports) and marks its hits as the search index does.
 */
export { type Snippet, snippet } from "./snippet.js";
