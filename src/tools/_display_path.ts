/**
 * How Glob and Grep show the paths they find on disk, which a hostile repository names.
 *
 * @module
 */
import { escapeHiddenInJson, hasHidden } from "../common/hidden_chars.ts";

/**
 * A path found on disk as Glob and Grep show it: as it is, unless it holds a character that would let it pass
 * for other lines or other text (a control character, a bidirectional control, an invisible one: `hasHidden`) or
 * starts with a double quote; then as a JSON string, every such character escaped (as git quotes such
 * names): a repository's file named "a.ts\nsrc/fake.ts" shows as one quoted path, not as two files. The
 * model passes it back decoded, as any JSON string in its input is.
 */
export function displayPath(path: string): string {
  if (!hasHidden(path) && !path.startsWith('"')) return path;
  return escapeHiddenInJson(JSON.stringify(path));
}
